"""Behaviour every item type shares (SPEC §3.1, §4.4), run for notes, bookmarks and prompts.

Delete (trash / permanent), archive, unarchive, restore, track-usage, optimistic locking
(`expected_updated_at` → 409) and `If-Match` (→ 412). Type-specific rules live in the per-type
modules.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from content import services
from content.history import Actor
from content.models import Item, ItemVersion
from content.tests.factories import FACTORIES
from content.tests.helpers import (
    CREATE_BODIES,
    MODELS,
    action_url,
    assert_error,
    db_state,
    detail_url,
    item_body,
    list_url,
)

pytestmark = pytest.mark.django_db

KINDS = ["note", "bookmark", "prompt"]
PAST = timedelta(hours=1)


@pytest.fixture(params=KINDS)
def kind(request: Any) -> str:
    return request.param


@pytest.fixture
def item(kind: str, owner: Any) -> Item:
    """An active item created through the service (so it has history)."""
    return services.create_item(
        owner=owner, model=MODELS[kind], data=CREATE_BODIES[kind], actor=Actor()
    )


def _fresh(item: Item) -> Item:
    return type(item).objects.get(pk=item.pk)


def _listed_ids(api: Any, kind: str, **params: Any) -> list[str]:
    return [row["id"] for row in api.get(list_url(kind), params).json()["results"]]


# --- delete -------------------------------------------------------------------------------------


def test_delete_moves_the_item_to_trash(api: Any, kind: str, item: Item) -> None:
    response = api.delete(detail_url(kind, item.pk))
    assert response.status_code == 204
    assert response.content == b""
    body = api.get(detail_url(kind, item.pk)).json()
    assert body["state"] == "deleted"
    assert body["deleted_at"] is not None
    assert _fresh(item).deleted_at is not None
    assert str(item.pk) not in _listed_ids(api, kind)
    assert str(item.pk) in _listed_ids(api, kind, view="deleted")


def test_deleted_item_cannot_be_patched_archived_or_deleted_again(
    api: Any, kind: str, item: Item
) -> None:
    api.delete(detail_url(kind, item.pk))
    before = db_state()
    assert_error(
        api.patch(detail_url(kind, item.pk), {"title": "x"}, format="json"), 404, "not_found"
    )
    assert_error(api.post(action_url(kind, "archive", item.pk)), 404, "not_found")
    assert_error(api.delete(detail_url(kind, item.pk)), 404, "not_found")
    assert db_state() == before


@pytest.mark.parametrize("state", ["active", "archived", "deleted"])
def test_permanent_delete_removes_the_row_and_its_history_in_any_state(
    api: Any, kind: str, item: Item, state: str
) -> None:
    if state == "archived":
        api.post(action_url(kind, "archive", item.pk))
    elif state == "deleted":
        api.delete(detail_url(kind, item.pk))
    assert ItemVersion.objects.filter(item_id=item.pk).exists()
    response = api.delete(detail_url(kind, item.pk) + "?permanent=true")
    assert response.status_code == 204
    assert not MODELS[kind].objects.filter(pk=item.pk).exists()
    assert not ItemVersion.objects.filter(item_id=item.pk).exists()
    assert_error(api.get(detail_url(kind, item.pk)), 404, "not_found")


def test_permanent_false_is_a_soft_delete(api: Any, kind: str, item: Item) -> None:
    assert api.delete(detail_url(kind, item.pk) + "?permanent=false").status_code == 204
    assert _fresh(item).deleted_at is not None


def test_delete_with_a_non_boolean_permanent_is_400(api: Any, kind: str, item: Item) -> None:
    before = db_state()
    assert_error(
        api.delete(detail_url(kind, item.pk) + "?permanent=maybe"), 400, "validation_error"
    )
    assert db_state() == before


# --- archive / unarchive ------------------------------------------------------------------------


def test_archive_sets_archived_at_and_hides_the_item_from_active_lists(
    api: Any, kind: str, item: Item
) -> None:
    response = api.post(action_url(kind, "archive", item.pk))
    assert response.status_code == 200
    body = response.json()
    assert body["state"] == "archived"
    assert body["archived_at"] is not None
    assert body["content"] == item.content
    assert str(item.pk) not in _listed_ids(api, kind)
    assert str(item.pk) in _listed_ids(api, kind, view="archived")


def test_archive_is_idempotent(api: Any, kind: str, item: Item) -> None:
    first = api.post(action_url(kind, "archive", item.pk)).json()
    second = api.post(action_url(kind, "archive", item.pk))
    assert second.status_code == 200
    assert second.json()["archived_at"] == first["archived_at"]


def test_archive_does_not_bump_updated_at(api: Any, kind: str, item: Item) -> None:
    before = _fresh(item).updated_at
    api.post(action_url(kind, "archive", item.pk))
    assert _fresh(item).updated_at == before


def test_archive_of_a_scheduled_item_archives_it_now(api: Any, kind: str, item: Item) -> None:
    MODELS[kind].objects.filter(pk=item.pk).update(archived_at=timezone.now() + timedelta(days=1))
    body = api.post(action_url(kind, "archive", item.pk)).json()
    assert body["state"] == "archived"
    assert _fresh(item).archived_at <= timezone.now()


def test_unarchive_makes_the_item_active_again(api: Any, kind: str, item: Item) -> None:
    api.post(action_url(kind, "archive", item.pk))
    response = api.post(action_url(kind, "unarchive", item.pk))
    assert response.status_code == 200
    assert response.json()["state"] == "active"
    assert _fresh(item).archived_at is None
    assert str(item.pk) in _listed_ids(api, kind)


def test_unarchive_of_an_active_item_is_400(api: Any, kind: str, item: Item) -> None:
    before = db_state()
    body = assert_error(api.post(action_url(kind, "unarchive", item.pk)), 400, "validation_error")
    assert "not archived" in body["message"]
    assert db_state() == before


# --- restore ------------------------------------------------------------------------------------


def test_restore_brings_a_deleted_item_back_to_active(api: Any, kind: str, item: Item) -> None:
    api.delete(detail_url(kind, item.pk))
    response = api.post(action_url(kind, "restore", item.pk))
    assert response.status_code == 200
    body = response.json()
    assert body["state"] == "active"
    assert body["deleted_at"] is None
    assert str(item.pk) in _listed_ids(api, kind)


def test_restore_clears_archived_at_too(api: Any, kind: str, item: Item) -> None:
    past = timezone.now() - PAST
    MODELS[kind].objects.filter(pk=item.pk).update(archived_at=past, deleted_at=past)
    body = api.post(action_url(kind, "restore", item.pk)).json()
    assert body["archived_at"] is None
    assert body["state"] == "active"
    fresh = _fresh(item)
    assert fresh.archived_at is None
    assert fresh.deleted_at is None


@pytest.mark.parametrize("archived", [False, True])
def test_restore_of_an_item_not_in_the_trash_is_400(
    api: Any, kind: str, item: Item, archived: bool
) -> None:
    if archived:
        api.post(action_url(kind, "archive", item.pk))
    before = db_state()
    body = assert_error(api.post(action_url(kind, "restore", item.pk)), 400, "validation_error")
    assert "trash" in body["message"]
    assert db_state() == before


# --- track-usage --------------------------------------------------------------------------------


def test_track_usage_bumps_last_used_at_only(api: Any, kind: str, item: Item) -> None:
    old = timezone.now() - timedelta(days=2)
    MODELS[kind].objects.filter(pk=item.pk).update(last_used_at=old)
    before = _fresh(item)
    response = api.post(action_url(kind, "track-usage", item.pk))
    assert response.status_code == 204
    after = _fresh(item)
    assert after.last_used_at > old
    assert after.updated_at == before.updated_at
    assert api.get(detail_url(kind, item.pk)).json()["last_used_at"] != item.last_used_at


# --- optimistic locking -------------------------------------------------------------------------


def _change(kind: str) -> dict[str, Any]:
    return {"title": "Changed title"}


def test_patch_with_current_expected_updated_at_succeeds(api: Any, kind: str, item: Item) -> None:
    loaded = api.get(detail_url(kind, item.pk)).json()
    response = api.patch(
        detail_url(kind, item.pk),
        {**_change(kind), "expected_updated_at": loaded["updated_at"]},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["title"] == "Changed title"


def test_patch_with_stale_expected_updated_at_is_409_with_server_state(
    api: Any, kind: str, item: Item
) -> None:
    loaded = api.get(detail_url(kind, item.pk)).json()
    api.patch(detail_url(kind, item.pk), {"description": "someone else"}, format="json")
    before = db_state()
    response = api.patch(
        detail_url(kind, item.pk),
        {**_change(kind), "expected_updated_at": loaded["updated_at"]},
        format="json",
    )
    body = assert_error(response, 409, "conflict")
    assert "modified since you loaded it" in body["message"]
    assert body["server_state"] == item_body(api.get(detail_url(kind, item.pk)))
    assert body["server_state"]["description"] == "someone else"
    assert db_state() == before


def test_get_sends_an_etag_that_changes_when_the_item_changes(
    api: Any, kind: str, item: Item
) -> None:
    first = api.get(detail_url(kind, item.pk))["ETag"]
    assert api.get(detail_url(kind, item.pk))["ETag"] == first
    api.patch(detail_url(kind, item.pk), _change(kind), format="json")
    assert api.get(detail_url(kind, item.pk))["ETag"] != first


def test_patch_with_matching_if_match_succeeds(api: Any, kind: str, item: Item) -> None:
    etag = api.get(detail_url(kind, item.pk))["ETag"]
    response = api.patch(
        detail_url(kind, item.pk), _change(kind), format="json", HTTP_IF_MATCH=etag
    )
    assert response.status_code == 200


def test_patch_with_stale_if_match_is_412_with_server_state(
    api: Any, kind: str, item: Item
) -> None:
    etag = api.get(detail_url(kind, item.pk))["ETag"]
    api.patch(detail_url(kind, item.pk), {"description": "newer"}, format="json")
    before = db_state()
    response = api.patch(
        detail_url(kind, item.pk), _change(kind), format="json", HTTP_IF_MATCH=etag
    )
    body = assert_error(response, 412, "precondition_failed")
    assert body["server_state"] == item_body(api.get(detail_url(kind, item.pk)))
    assert db_state() == before


def test_delete_with_stale_if_match_is_412_and_keeps_the_item(
    api: Any, kind: str, item: Item
) -> None:
    etag = api.get(detail_url(kind, item.pk))["ETag"]
    api.patch(detail_url(kind, item.pk), {"description": "newer"}, format="json")
    before = db_state()
    assert_error(
        api.delete(detail_url(kind, item.pk), HTTP_IF_MATCH=etag), 412, "precondition_failed"
    )
    assert_error(
        api.delete(detail_url(kind, item.pk) + "?permanent=true", HTTP_IF_MATCH=etag),
        412,
        "precondition_failed",
    )
    assert db_state() == before


def test_delete_with_current_if_match_succeeds(api: Any, kind: str, item: Item) -> None:
    etag = api.get(detail_url(kind, item.pk))["ETag"]
    assert api.delete(detail_url(kind, item.pk), HTTP_IF_MATCH=etag).status_code == 204


def test_if_match_star_always_matches(api: Any, kind: str, item: Item) -> None:
    response = api.patch(detail_url(kind, item.pk), _change(kind), format="json", HTTP_IF_MATCH="*")
    assert response.status_code == 200


def test_patch_response_etag_is_the_new_etag(api: Any, kind: str, item: Item) -> None:
    response = api.patch(detail_url(kind, item.pk), _change(kind), format="json")
    assert response["ETag"] == api.get(detail_url(kind, item.pk))["ETag"]


def test_factory_items_work_with_lifecycle_endpoints(api: Any, kind: str, owner: Any) -> None:
    # Items written without the services (no history yet) still go through every action.
    item = FACTORIES[kind](owner=owner)
    for action in ("archive", "unarchive"):
        assert api.post(action_url(kind, action, item.pk)).status_code == 200
    assert api.delete(detail_url(kind, item.pk)).status_code == 204
    assert api.post(action_url(kind, "restore", item.pk)).status_code == 200
    assert api.post(action_url(kind, "track-usage", item.pk)).status_code == 204
