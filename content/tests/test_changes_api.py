"""GET /api/changes/ (SPEC §17.1): every write on every path, cursors, scopes and bad input."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from content.models.changes import Change
from tiddly.models import ApiToken

pytestmark = pytest.mark.django_db

FEED = "/api/changes/"


def _feed(client: APIClient, **params: Any) -> dict[str, Any]:
    response = client.get(FEED, params)
    assert response.status_code == 200, response.content
    return response.json()


def _actions(client: APIClient) -> list[tuple[str, str, int | None]]:
    body = _feed(client, limit=500)
    return [(c["type"], c["action"], c["version"]) for c in body["changes"]]


def _note(api: APIClient, **extra: Any) -> dict[str, Any]:
    response = api.post("/api/notes/", {"title": "n", "content": "a\nb", **extra}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_every_rest_write_of_an_item_is_one_change_in_order(api: APIClient) -> None:
    note = _note(api)
    base = f"/api/notes/{note['id']}/"
    assert api.patch(base, {"title": "n2"}, format="json").status_code == 200
    assert (
        api.patch(
            base + "str-replace/", {"old_str": "a", "new_str": "c"}, format="json"
        ).status_code
        == 200
    )
    assert api.post(base + "archive/").status_code == 200
    assert api.post(base + "unarchive/").status_code == 200
    assert api.post(base + "history/1/restore/").status_code == 200
    assert api.delete(base).status_code == 204
    assert api.post(base + "restore/").status_code == 200
    assert api.delete(base + "?permanent=true").status_code == 204
    assert _actions(api) == [
        ("note", "created", 1),
        ("note", "updated", 2),
        ("note", "updated", 3),
        ("note", "archived", None),
        ("note", "unarchived", None),
        ("note", "updated", 4),
        ("note", "deleted", None),
        ("note", "restored", None),
        ("note", "purged", None),
    ]
    assert Change.objects.count() == 9  # the purge kept the earlier changes


def test_a_change_carries_fields_source_and_cursor(api: APIClient) -> None:
    note = _note(api)
    api.patch(
        f"/api/notes/{note['id']}/",
        {"title": "t", "tags": ["x"]},
        format="json",
        HTTP_X_REQUEST_SOURCE="my-script",
    )
    created, updated = _feed(api)["changes"]
    assert created["id"] == note["id"]
    assert created["changed_fields"] == ["content", "title"]
    assert created["source"] == "api"
    assert updated["changed_fields"] == ["tags", "title"]
    assert updated["source"] == "my-script"
    assert set(updated) == {
        "cursor",
        "type",
        "id",
        "action",
        "version",
        "changed_fields",
        "source",
        "at",
    }
    after_first = _feed(api, since=created["cursor"])["changes"]
    assert [c["cursor"] for c in after_first] == [updated["cursor"]]


def test_a_link_and_an_unlink_are_one_change_on_each_end(api: APIClient) -> None:
    a, b = _note(api), _note(api)
    link = api.post(
        "/api/relationships/",
        {"source_type": "note", "source_id": a["id"], "target_type": "note", "target_id": b["id"]},
        format="json",
    )
    assert link.status_code == 201
    assert api.delete(f"/api/relationships/{link.json()['id']}/").status_code == 204
    changes = _feed(api)["changes"][2:]
    assert sorted((c["action"], c["id"]) for c in changes) == sorted(
        [("linked", a["id"]), ("linked", b["id"]), ("unlinked", a["id"]), ("unlinked", b["id"])]
    )


def test_prompts_carry_their_name_and_need_the_prompts_scope(api: APIClient, owner: Any) -> None:
    response = api.post("/api/prompts/", {"name": "greet", "content": "hi"}, format="json")
    assert response.status_code == 201
    _note(api)
    (change,) = _feed(api, type="prompt")["changes"]
    assert change["name"] == "greet"
    _, plaintext = ApiToken.issue(owner=owner, name="ro", scopes="content:read")
    reader = APIClient()
    reader.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert [c["type"] for c in _feed(reader)["changes"]] == ["note"]
    refused = reader.get(FEED, {"type": "prompt"})
    assert refused.status_code == 403
    assert refused.json()["error"] == "forbidden"
    assert "prompts:read" in refused.json()["message"]


def test_polling_with_next_cursor_pages_without_gaps_or_repeats(api: APIClient) -> None:
    ids = [_note(api)["id"] for _ in range(5)]
    seen: list[str] = []
    since = None
    for _ in range(5):
        body = _feed(api, limit=2, **({"since": since} if since else {}))
        seen += [c["id"] for c in body["changes"]]
        since = body["next_cursor"]
        if not body["has_more"]:
            break
    assert seen == ids
    assert _feed(api, since=since) == {"changes": [], "next_cursor": since, "has_more": False} or (
        _feed(api, since=since)["changes"] == []
    )


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 501}, "limit"),
        ({"limit": "x"}, "limit"),
        ({"type": "tag"}, "type"),
        ({"since": "garbage"}, "since"),
        ({"sinse": "x"}, "sinse"),
    ],
)
def test_bad_parameters_are_validation_errors(
    api: APIClient, params: dict[str, Any], field: str
) -> None:
    response = api.get(FEED, params)
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert field in response.json()["fields"]


def test_a_strangers_cursor_is_a_validation_error(api: APIClient, other_api: APIClient) -> None:
    _note(other_api)
    foreign = _feed(other_api)["next_cursor"]
    response = api.get(FEED, {"since": foreign})
    assert response.status_code == 400
    assert "another feed" in response.json()["fields"]["since"][0]


def test_a_stranger_sees_none_of_my_changes(api: APIClient, other_api: APIClient) -> None:
    _note(api)
    assert _feed(other_api)["changes"] == []


def test_anonymous_gets_401(anon: APIClient) -> None:
    response = anon.get(FEED)
    assert response.status_code == 401
    assert response.json()["error"] == "not_authenticated"


def test_the_api_root_links_the_feed(anon: APIClient) -> None:
    body = anon.get(reverse("api-root")).json()
    assert body["changes"].endswith("/api/changes/")


def _linked_notes(api: APIClient) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    doomed, a, b = _note(api), _note(api), _note(api)
    for other in (a, b):
        link = api.post(
            "/api/relationships/",
            {
                "source_type": "note",
                "source_id": doomed["id"],
                "target_type": "note",
                "target_id": other["id"],
            },
            format="json",
        )
        assert link.status_code == 201
    return doomed, a, b


def _after(api: APIClient, cursor: str) -> list[tuple[str, str, str]]:
    return [(c["action"], c["id"], c["source"]) for c in _feed(api, since=cursor)["changes"]]


def test_a_purge_unlinks_the_other_ends_with_one_change_each(api: APIClient) -> None:
    from content.models import HistoryAction, ItemVersion, Relationship

    doomed, a, b = _linked_notes(api)
    cursor = _feed(api)["next_cursor"]
    response = api.delete(
        f"/api/notes/{doomed['id']}/?permanent=true", HTTP_X_REQUEST_SOURCE="my-script"
    )
    assert response.status_code == 204
    assert sorted(_after(api, cursor)) == sorted(
        [
            ("purged", doomed["id"], "my-script"),
            ("unlinked", a["id"], "my-script"),
            ("unlinked", b["id"], "my-script"),
        ]
    )
    assert not Relationship.objects.exists()
    for other in (a, b):
        unlinks = ItemVersion.objects.filter(item_id=other["id"], action=HistoryAction.UNLINK)
        assert list(unlinks.values_list("source", flat=True)) == ["my-script"]
        assert api.get(f"/api/relationships/?type=note&id={other['id']}").json()["count"] == 0


def test_a_purge_of_an_item_linked_to_one_in_the_trash_unlinks_that_one_too(
    api: APIClient,
) -> None:
    doomed, a, b = _linked_notes(api)
    assert api.delete(f"/api/notes/{a['id']}/").status_code == 204
    cursor = _feed(api)["next_cursor"]
    assert api.delete(f"/api/notes/{doomed['id']}/?permanent=true").status_code == 204
    assert sorted(_after(api, cursor)) == sorted(
        [
            ("purged", doomed["id"], "api"),
            ("unlinked", a["id"], "api"),
            ("unlinked", b["id"], "api"),
        ]
    )


@pytest.mark.parametrize("path", ["action", "delete_view"])
def test_an_admin_purge_records_source_admin_on_every_end(
    api: APIClient, staff: Any, path: str
) -> None:
    from django.test import Client

    doomed, a, b = _linked_notes(api)
    cursor = _feed(api)["next_cursor"]
    admin = Client()
    admin.force_login(staff)
    if path == "action":
        response = admin.post(
            "/admin/content/note/",
            {"action": "delete_permanently", "_selected_action": [doomed["id"]], "post": "yes"},
        )
    else:
        response = admin.post(f"/admin/content/note/{doomed['id']}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert api.get(f"/api/notes/{doomed['id']}/").status_code == 404
    assert sorted(_after(api, cursor)) == sorted(
        [
            ("purged", doomed["id"], "admin"),
            ("unlinked", a["id"], "admin"),
            ("unlinked", b["id"], "admin"),
        ]
    )
