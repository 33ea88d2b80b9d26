"""Revert by token: POST /api/history/revert/ and the history admin action (SPEC §6)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from content import services
from content.history import Actor
from content.models import ItemVersion, Note
from content.queries import ItemRef
from content.tests.editing_support import iso, make_item, versions
from content.tests.test_admin import changelist_url, texts
from prompts.models import Prompt
from tiddly.models import ApiToken

pytestmark = pytest.mark.django_db

REVERT_URL = "/api/history/revert/"


@pytest.fixture
def agent(owner: Any) -> tuple[ApiToken, APIClient]:
    """The API token whose changes get reverted, and a client using it."""
    token, plaintext = ApiToken.issue(owner=owner, name="rogue agent")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return token, client


def agent_edit(client: APIClient, item: Any, old: str, new: str) -> None:
    path = reverse(f"{item.type_name}-str-replace", args=[item.pk])
    response = client.patch(path, {"old_str": old, "new_str": new}, format="json")
    assert response.status_code == 200, response.content


def person_edit(item: Any, old: str, new: str) -> None:
    services.edit_content(
        owner=item.owner,
        ref=ItemRef(type(item), pk=item.pk),
        old_str=old,
        new_str=new,
        actor=Actor(source="api"),
    )


def content(item: Any) -> str:
    return type(item).objects.get(pk=item.pk).content  # type: ignore[no-any-return]


def since() -> str:
    return iso(timezone.now() - timedelta(minutes=5))  # type: ignore[return-value]


def revert(client: APIClient, token: ApiToken, **extra: Any) -> dict[str, Any]:
    body = {"token_prefix": token.prefix, "since": since(), **extra}
    response = client.post(REVERT_URL, body, format="json")
    assert response.status_code == 200, response.content
    return response.json()  # type: ignore[no-any-return]


def test_revert_puts_each_item_back_before_the_tokens_first_change(
    session_api: APIClient, owner: Any, agent: Any
) -> None:
    token, client = agent
    note = make_item(owner, "note", content="good note")
    prompt = make_item(owner, "prompt", content="good prompt")
    agent_edit(client, note, "good", "bad")
    agent_edit(client, note, "bad", "worse")
    agent_edit(client, prompt, "good", "bad")

    body = revert(session_api, token)

    assert body == {
        "reverted": [
            {"type": "note", "id": str(note.pk), "version": 4},
            {"type": "prompt", "id": str(prompt.pk), "version": 3},
        ],
        "trashed": [],
        "conflicts": [],
        "remaining": 0,
    }
    assert content(note) == "good note"
    assert content(prompt) == "good prompt"
    latest = versions(note)[-1]
    assert (latest.action, latest.source, latest.token_prefix) == ("restore", "revert", None)


def test_repeating_a_revert_changes_nothing_more(
    session_api: APIClient, owner: Any, agent: Any
) -> None:
    token, client = agent
    note = make_item(owner, "note", content="good")
    agent_edit(client, note, "good", "bad")
    revert(session_api, token)
    count = ItemVersion.objects.count()

    again = revert(session_api, token)

    assert again == {"reverted": [], "trashed": [], "conflicts": [], "remaining": 0}
    assert ItemVersion.objects.count() == count
    assert content(note) == "good"


def test_items_the_token_created_go_to_the_trash(
    session_api: APIClient, owner: Any, agent: Any
) -> None:
    token, client = agent
    response = client.post("/api/notes/", {"title": "spam", "content": "x"}, format="json")
    note = Note.objects.get(pk=response.json()["id"])

    body = revert(session_api, token)
    again = revert(session_api, token)

    assert body["trashed"] == [{"type": "note", "id": str(note.pk)}]
    assert Note.objects.get(pk=note.pk).deleted_at is not None
    assert again["trashed"] == []


def test_items_changed_by_someone_else_afterwards_are_conflicts_unless_forced(
    session_api: APIClient, owner: Any, agent: Any
) -> None:
    token, client = agent
    note = make_item(owner, "note", content="good text")
    agent_edit(client, note, "good", "bad")
    person_edit(note, "text", "words")

    body = revert(session_api, token)

    assert body["reverted"] == []
    assert [(c["type"], c["id"]) for c in body["conflicts"]] == [("note", str(note.pk))]
    assert "someone else" in body["conflicts"][0]["reason"]
    assert content(note) == "bad words"

    forced = revert(session_api, token, force=True)

    assert forced["reverted"] == [{"type": "note", "id": str(note.pk), "version": 4}]
    assert content(note) == "good text"


def test_changes_before_since_and_by_other_tokens_stay(
    session_api: APIClient, owner: Any, agent: Any
) -> None:
    token, client = agent
    note = make_item(owner, "note", content="one")
    agent_edit(client, note, "one", "two")
    ItemVersion.objects.filter(item_id=note.pk, version=2).update(
        created_at=timezone.now() - timedelta(hours=2)
    )
    _, other_plain = ApiToken.issue(owner=owner, name="good agent")
    good = APIClient()
    good.credentials(HTTP_AUTHORIZATION=f"Bearer {other_plain}")
    agent_edit(good, note, "two", "three")

    assert revert(session_api, token) == {
        "reverted": [],
        "trashed": [],
        "conflicts": [],
        "remaining": 0,
    }
    assert content(note) == "three"


def test_a_stranger_cannot_revert_the_owners_items(
    other_api: APIClient, owner: Any, agent: Any
) -> None:
    token, client = agent
    note = make_item(owner, "note", content="good")
    agent_edit(client, note, "good", "bad")

    assert revert(other_api, token) == {
        "reverted": [],
        "trashed": [],
        "conflicts": [],
        "remaining": 0,
    }
    assert content(note) == "bad"


def test_revert_needs_token_prefix_and_since(session_api: APIClient, anon: APIClient) -> None:
    missing = session_api.post(REVERT_URL, {"token_prefix": "tdly_x"}, format="json")
    unknown = session_api.post(
        REVERT_URL, {"token_prefix": "x", "since": since(), "colour": 1}, format="json"
    )
    anonymous = anon.post(REVERT_URL, {"token_prefix": "x", "since": since()}, format="json")

    assert missing.status_code == 400
    assert missing.json()["fields"].keys() == {"since"}
    assert unknown.status_code == 400
    assert anonymous.status_code == 401


def test_a_restore_that_fails_its_checks_is_a_conflict_and_the_rest_is_reverted(
    session_api: APIClient, owner: Any, agent: Any
) -> None:
    token, client = agent
    first = make_item(owner, "prompt", name="first", content="a")
    second = make_item(owner, "note", content="good")
    response = client.patch(
        reverse("prompt-detail", args=[first.pk]), {"name": "renamed"}, format="json"
    )
    assert response.status_code == 200
    agent_edit(client, second, "good", "bad")
    make_item(owner, "prompt", name="first", content="taken")  # the old name is now in use

    body = revert(session_api, token)

    assert body["reverted"] == [{"type": "note", "id": str(second.pk), "version": 3}]
    assert [c["id"] for c in body["conflicts"]] == [str(first.pk)]
    assert Prompt.objects.get(pk=first.pk).name == "renamed"


# --- the admin action ---------------------------------------------------------------------------


def test_admin_action_confirms_then_reverts_everything_since_the_selected_change(
    staff_client: Client, owner: Any, agent: Any
) -> None:
    token, client = agent
    note = make_item(owner, "note", content="good note")
    other = make_item(owner, "note", content="good other")
    agent_edit(client, note, "good", "bad")
    agent_edit(client, other, "good", "bad")
    first_change = ItemVersion.objects.get(item_id=note.pk, version=2)
    body = {"action": "revert_token", "_selected_action": [str(first_change.pk)]}

    confirm = staff_client.post(changelist_url(ItemVersion), body)

    assert confirm.status_code == 200
    page = confirm.content.decode()
    assert token.prefix in page
    assert page.count("back to version 1") == 2
    assert content(note) == "bad note"

    done = staff_client.post(changelist_url(ItemVersion), {**body, "post": "yes"}, follow=True)

    assert done.status_code == 200
    assert any("2 item(s) reverted" in t for t in texts(done))
    assert content(note) == "good note"
    assert content(other) == "good other"
    assert versions(note)[-1].source == "revert"


def test_admin_action_refuses_changes_made_without_a_token(
    staff_client: Client, owner: Any
) -> None:
    note = make_item(owner, "note", content="x")
    row = ItemVersion.objects.get(item_id=note.pk, version=1)

    response = staff_client.post(
        changelist_url(ItemVersion),
        {"action": "revert_token", "_selected_action": [str(row.pk)]},
        follow=True,
    )

    assert any("one API token" in t for t in texts(response))


def test_a_revert_with_only_the_content_write_scope_leaves_prompts_alone(owner: Any) -> None:
    agent, _ = ApiToken.issue(owner=owner, name="agent")
    acting = Actor(source="api", token_prefix=agent.prefix)
    start = timezone.now() - timedelta(seconds=1)
    prompt = services.create_item(
        owner=owner, model=Prompt, data={"name": "p", "content": "A"}, actor=Actor()
    )
    note = services.create_item(owner=owner, model=Note, data={"title": "n"}, actor=Actor())
    services.update_item(
        owner=owner, ref=ItemRef(Prompt, pk=prompt.pk), data={"content": "B"}, actor=acting
    )
    services.update_item(
        owner=owner, ref=ItemRef(Note, pk=note.pk), data={"title": "changed"}, actor=acting
    )
    _, plaintext = ApiToken.issue(owner=owner, name="content only", scopes="content:write")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")

    response = client.post(
        "/api/history/revert/",
        {"token_prefix": agent.prefix, "since": start.isoformat()},
        format="json",
    )

    assert response.status_code == 200
    assert [r["id"] for r in response.json()["reverted"]] == [str(note.pk)]
    prompt.refresh_from_db()
    note.refresh_from_db()
    assert (prompt.content, note.title) == ("B", "n")
