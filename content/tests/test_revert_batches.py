"""Revert by token in batches: `remaining`, a whole-revert dry run, strict booleans (SPEC §6)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from content.models import ItemVersion
from content.tests.editing_support import make_item
from content.tests.test_admin import changelist_url, texts
from content.tests.test_revert import REVERT_URL, agent, agent_edit, content, revert, since

pytestmark = pytest.mark.django_db
__all__ = ["agent"]  # the fixture, used by name


@pytest.fixture
def seven_edited(owner: Any, agent: Any, settings: Any) -> list[Any]:
    settings.TIDDLY_REVERT_BATCH = 3
    _, client = agent
    notes = [make_item(owner, "note", content=f"good {n}") for n in range(7)]
    for note in notes:
        agent_edit(client, note, "good", "bad")
    return notes


def test_a_revert_changes_at_most_a_batch_and_says_how_many_remain(
    session_api: APIClient, agent: Any, seven_edited: list[Any]
) -> None:
    token, _ = agent
    rounds = []
    for _ in range(4):
        body = revert(session_api, token)
        rounds.append((len(body["reverted"]), body["remaining"]))
    assert rounds == [(3, 4), (3, 1), (1, 0), (0, 0)]
    assert [content(note) for note in seven_edited] == [f"good {n}" for n in range(7)]
    for note in seven_edited:
        assert ItemVersion.objects.filter(item_id=note.pk, source="revert").count() == 1


def test_a_dry_run_counts_the_whole_revert_and_writes_nothing(
    session_api: APIClient, agent: Any, owner: Any, seven_edited: list[Any]
) -> None:
    token, client = agent
    created = client.post("/api/notes/", {"title": "by the agent"}, format="json")
    assert created.status_code == 201

    body = revert(session_api, token, dry_run=True)

    assert body == {"dry_run": True, "reverted": 7, "trashed": 1, "conflicts": 0}
    assert [content(note) for note in seven_edited] == [f"bad {n}" for n in range(7)]
    assert not ItemVersion.objects.filter(source="revert").exists()


@pytest.mark.parametrize("value", [0, 1, "yes", "true", None])
@pytest.mark.parametrize("name", ["force", "dry_run"])
def test_revert_flags_must_be_json_booleans(
    session_api: APIClient, agent: Any, seven_edited: list[Any], name: str, value: Any
) -> None:
    token, _ = agent
    body = {"token_prefix": token.prefix, "since": since(), name: value}
    response = session_api.post(REVERT_URL, body, format="json")
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    message = response.json()["fields"][name][0]
    assert "JSON boolean" in message if value is not None else "null" in message
    assert content(seven_edited[0]) == "bad 0"


def test_the_admin_action_runs_every_batch(
    staff_client: Client, agent: Any, seven_edited: list[Any]
) -> None:
    first = ItemVersion.objects.get(item_id=seven_edited[0].pk, version=2)
    body = {"action": "revert_token", "_selected_action": [str(first.pk)], "post": "yes"}

    done = staff_client.post(changelist_url(ItemVersion), body, follow=True)

    assert any("7 item(s) reverted" in t for t in texts(done))
    assert [content(note) for note in seven_edited] == [f"good {n}" for n in range(7)]


@pytest.mark.parametrize("name", ["replace_all", "dry_run"])
def test_edit_flags_must_be_json_booleans(api: APIClient, owner: Any, name: str) -> None:
    note = make_item(owner, "note", content="a a")
    response = api.patch(
        f"/api/notes/{note.pk}/str-replace/",
        {"old_str": "a", "new_str": "b", name: "yes"},
        format="json",
    )
    assert response.status_code == 400
    assert "JSON boolean" in response.json()["fields"][name][0]
    assert content(note) == "a a"
