"""/api/bookmarks/: URL rules (normalisation, validation, uniqueness among live bookmarks)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from content.models import Bookmark
from content.tests.factories import BookmarkFactory
from content.tests.helpers import action_url, assert_error, db_state, detail_url, list_url

pytestmark = pytest.mark.django_db


def test_create_bookmark_returns_201_with_url_and_stores_row(api: Any, owner: Any) -> None:
    response = api.post(
        list_url("bookmark"),
        {"url": "https://example.com/a?b=1", "title": "A", "tags": ["Read-Later"]},
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["type"] == "bookmark"
    assert body["url"] == "https://example.com/a?b=1"
    assert body["tags"] == ["read-later"]
    assert body["content"] is None
    bookmark = Bookmark.objects.get(pk=body["id"])
    assert (bookmark.owner, bookmark.url, bookmark.title) == (owner, body["url"], "A")


def test_bookmark_title_is_optional(api: Any) -> None:
    response = api.post(list_url("bookmark"), {"url": "https://example.com/x"}, format="json")
    assert response.status_code == 201
    assert response.json()["title"] is None


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("https://example.com", "https://example.com/"),
        ("  http://example.com  ", "http://example.com/"),
        ("https://example.com?q=1", "https://example.com/?q=1"),
        ("https://example.com/path", "https://example.com/path"),
    ],
)
def test_bookmark_url_is_normalised(api: Any, given: str, stored: str) -> None:
    response = api.post(list_url("bookmark"), {"url": given}, format="json")
    assert response.status_code == 201
    assert response.json()["url"] == stored
    assert Bookmark.objects.get().url == stored


@pytest.mark.parametrize(
    "url", ["example.com", "ftp://example.com/", "javascript:alert(1)", "https://", "", "   "]
)
def test_create_bookmark_with_invalid_url_is_400(api: Any, url: str) -> None:
    body = assert_error(
        api.post(list_url("bookmark"), {"url": url}, format="json"), 400, "validation_error"
    )
    assert "url" in body["fields"]
    assert not Bookmark.objects.exists()


def test_create_bookmark_without_url_is_400(api: Any) -> None:
    body = assert_error(
        api.post(list_url("bookmark"), {"title": "x"}, format="json"), 400, "validation_error"
    )
    assert "url" in body["fields"]


def test_bookmark_url_longer_than_2048_is_field_limit_exceeded(api: Any) -> None:
    url = "https://example.com/" + "a" * 2030
    error = assert_error(
        api.post(list_url("bookmark"), {"url": url}, format="json"), 400, "field_limit_exceeded"
    )
    assert (error["field"], error["limit"]) == ("url", 2048)


def test_duplicate_url_is_409_url_conflict_with_existing_id(api: Any, owner: Any) -> None:
    existing = BookmarkFactory(owner=owner, url="https://example.com/")
    before = db_state()
    response = api.post(list_url("bookmark"), {"url": "https://example.com"}, format="json")
    body = assert_error(response, 409, "url_conflict")
    assert body["existing_id"] == str(existing.pk)
    assert db_state() == before


def test_archived_bookmark_still_holds_its_url(api: Any, owner: Any) -> None:
    existing = BookmarkFactory(
        owner=owner, url="https://example.com/", archived_at=timezone.now() - timedelta(days=1)
    )
    body = assert_error(
        api.post(list_url("bookmark"), {"url": "https://example.com/"}, format="json"),
        409,
        "url_conflict",
    )
    assert body["existing_id"] == str(existing.pk)
    assert "archive" in body["message"]


def test_deleted_bookmark_frees_its_url(api: Any, owner: Any) -> None:
    BookmarkFactory(owner=owner, url="https://example.com/", deleted_at=timezone.now())
    response = api.post(list_url("bookmark"), {"url": "https://example.com/"}, format="json")
    assert response.status_code == 201
    assert Bookmark.objects.filter(url="https://example.com/").count() == 2


def test_another_users_bookmark_does_not_block_the_url(api: Any, other: Any) -> None:
    BookmarkFactory(owner=other, url="https://example.com/")
    response = api.post(list_url("bookmark"), {"url": "https://example.com/"}, format="json")
    assert response.status_code == 201


def test_patch_url_to_one_already_used_is_409_url_conflict(api: Any, owner: Any) -> None:
    taken = BookmarkFactory(owner=owner, url="https://taken.example/")
    mine = BookmarkFactory(owner=owner, url="https://mine.example/")
    before = db_state()
    response = api.patch(
        detail_url("bookmark", mine.pk), {"url": "https://taken.example"}, format="json"
    )
    body = assert_error(response, 409, "url_conflict")
    assert body["existing_id"] == str(taken.pk)
    assert db_state() == before


def test_patch_url_normalises_and_bumps_updated_at(api: Any, owner: Any) -> None:
    mine = BookmarkFactory(owner=owner, url="https://mine.example/")
    response = api.patch(
        detail_url("bookmark", mine.pk), {"url": "https://new.example"}, format="json"
    )
    assert response.json()["url"] == "https://new.example/"
    mine.refresh_from_db()
    assert mine.updated_at > mine.created_at


def test_patch_url_to_the_same_normalised_value_is_a_no_op(api: Any, owner: Any) -> None:
    mine = BookmarkFactory(owner=owner, url="https://mine.example/")
    response = api.patch(
        detail_url("bookmark", mine.pk), {"url": " https://mine.example "}, format="json"
    )
    assert response.status_code == 200
    mine.refresh_from_db()
    assert mine.updated_at == mine.created_at


@pytest.mark.parametrize("url", [None, "", "not a url"])
def test_patch_url_to_null_or_invalid_is_400(api: Any, owner: Any, url: Any) -> None:
    mine = BookmarkFactory(owner=owner, url="https://mine.example/")
    before = db_state()
    body = assert_error(
        api.patch(detail_url("bookmark", mine.pk), {"url": url}, format="json"),
        400,
        "validation_error",
    )
    assert "url" in body["fields"]
    assert db_state() == before


def test_patch_title_to_null_clears_a_bookmark_title(api: Any, owner: Any) -> None:
    mine = BookmarkFactory(owner=owner, title="Old")
    response = api.patch(detail_url("bookmark", mine.pk), {"title": None}, format="json")
    assert response.status_code == 200
    assert response.json()["title"] is None
    mine.refresh_from_db()
    assert mine.title is None


def test_restore_is_409_url_conflict_when_the_url_was_taken_again(api: Any, owner: Any) -> None:
    trashed = BookmarkFactory(owner=owner, url="https://example.com/", deleted_at=timezone.now())
    again = BookmarkFactory(owner=owner, url="https://example.com/")
    before = db_state()
    body = assert_error(
        api.post(action_url("bookmark", "restore", trashed.pk)), 409, "url_conflict"
    )
    assert body["existing_id"] == str(again.pk)
    assert db_state() == before


def test_restore_succeeds_when_the_clashing_bookmark_is_itself_deleted(
    api: Any, owner: Any
) -> None:
    trashed = BookmarkFactory(owner=owner, url="https://example.com/", deleted_at=timezone.now())
    BookmarkFactory(owner=owner, url="https://example.com/", deleted_at=timezone.now())
    assert api.post(action_url("bookmark", "restore", trashed.pk)).status_code == 200


def test_two_deleted_bookmarks_may_share_a_url_in_the_database(owner: Any) -> None:
    for _ in range(2):
        BookmarkFactory(owner=owner, url="https://dup.example/", deleted_at=timezone.now())
    assert Bookmark.objects.filter(url="https://dup.example/").count() == 2


def test_database_refuses_two_live_bookmarks_with_the_same_url(owner: Any) -> None:
    from django.db import IntegrityError, transaction

    BookmarkFactory(owner=owner, url="https://dup.example/")
    with pytest.raises(IntegrityError), transaction.atomic():
        BookmarkFactory(owner=owner, url="https://dup.example/")
