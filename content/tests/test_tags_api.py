"""/api/tags/: counts of active items, rename, delete (SPEC §3.2)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from content.models import Note, Tag
from content.tests.factories import BookmarkFactory, NoteFactory, PromptFactory, TagFactory
from content.tests.helpers import assert_error, db_state

pytestmark = pytest.mark.django_db

PAST = timedelta(hours=1)


def tags_url() -> str:
    return reverse("tag-list")


def tag_url(name: str) -> str:
    return reverse("tag-detail", kwargs={"name": name})


@pytest.fixture
def tagged(owner: Any) -> None:
    past = timezone.now() - PAST
    NoteFactory(owner=owner, tags=["work", "home"])
    BookmarkFactory(owner=owner, tags=["work"])
    PromptFactory(owner=owner, tags=["work"])
    NoteFactory(owner=owner, tags=["home"], archived_at=past)
    NoteFactory(owner=owner, tags=["old"], deleted_at=past)
    NoteFactory(owner=owner, tags=["later"], archived_at=timezone.now() + timedelta(days=1))
    TagFactory(owner=owner, name="unused")


def test_tags_list_counts_active_items_of_every_type(api: Any, tagged: None) -> None:
    response = api.get(tags_url())
    assert response.status_code == 200
    assert response.json() == [
        {"name": "work", "count": 3},
        {"name": "home", "count": 1},
        {"name": "later", "count": 1},
    ]


def test_tags_list_with_include_inactive_shows_every_tag(api: Any, tagged: None) -> None:
    body = api.get(tags_url(), {"include_inactive": "true"}).json()
    assert body == [
        {"name": "work", "count": 3},
        {"name": "home", "count": 1},
        {"name": "later", "count": 1},
        {"name": "old", "count": 0},
        {"name": "unused", "count": 0},
    ]


def test_tags_list_with_invalid_include_inactive_is_400(api: Any) -> None:
    assert_error(api.get(tags_url(), {"include_inactive": "perhaps"}), 400, "validation_error")


def test_tags_list_shows_only_the_callers_tags(api: Any, other: Any, tagged: None) -> None:
    NoteFactory(owner=other, tags=["work", "secret"])
    body = api.get(tags_url(), {"include_inactive": "true"}).json()
    assert {"name": "work", "count": 3} in body
    assert "secret" not in {row["name"] for row in body}


def test_rename_tag_keeps_it_on_every_item(api: Any, owner: Any, tagged: None) -> None:
    response = api.patch(tag_url("work"), {"name": "Job"}, format="json")
    assert response.status_code == 200
    assert response.json() == {"name": "job", "count": 3}
    assert not Tag.objects.filter(owner=owner, name="work").exists()
    assert {row["name"]: row["count"] for row in api.get(tags_url()).json()}["job"] == 3


def test_rename_tag_to_its_own_name_is_a_no_op(api: Any, tagged: None) -> None:
    response = api.patch(tag_url("work"), {"name": "work"}, format="json")
    assert response.json() == {"name": "work", "count": 3}


def test_rename_tag_to_an_existing_tag_is_409(api: Any, tagged: None) -> None:
    before = db_state()
    body = assert_error(
        api.patch(tag_url("work"), {"name": "home"}, format="json"), 409, "name_conflict"
    )
    assert "home" in body["message"]
    assert db_state() == before


def test_rename_missing_tag_is_404(api: Any) -> None:
    assert_error(api.patch(tag_url("nope"), {"name": "x"}, format="json"), 404, "not_found")


@pytest.mark.parametrize("name", ["", "   ", "not valid", "a" * 51])
def test_rename_tag_to_an_invalid_name_is_400(api: Any, tagged: None, name: str) -> None:
    before = db_state()
    response = api.patch(tag_url("work"), {"name": name}, format="json")
    assert response.status_code == 400
    assert response.json()["error"] in {"validation_error", "field_limit_exceeded"}
    assert db_state() == before


def test_rename_tag_does_not_touch_items_updated_at(api: Any, owner: Any) -> None:
    note = NoteFactory(owner=owner, tags=["a"])
    api.patch(tag_url("a"), {"name": "b"}, format="json")
    fresh = Note.objects.get(pk=note.pk)
    assert fresh.updated_at == note.updated_at
    assert fresh.tag_names() == ["b"]


def test_delete_tag_detaches_it_from_all_items(api: Any, owner: Any, tagged: None) -> None:
    response = api.delete(tag_url("work"))
    assert response.status_code == 204
    assert not Tag.objects.filter(owner=owner, name="work").exists()
    for note in Note.objects.filter(owner=owner):
        assert "work" not in note.tag_names()
    assert Note.objects.filter(owner=owner).count() == 4
    assert "work" not in {row["name"] for row in api.get(tags_url()).json()}


def test_delete_missing_tag_is_404(api: Any) -> None:
    assert_error(api.delete(tag_url("nope")), 404, "not_found")


def test_tag_lookup_is_case_insensitive(api: Any, owner: Any) -> None:
    TagFactory(owner=owner, name="mixed")
    assert api.delete(tag_url("MIXED")).status_code == 204


def test_tag_counts_follow_item_lifecycle(api: Any, owner: Any) -> None:
    note = NoteFactory(owner=owner, tags=["x"])
    assert api.get(tags_url()).json() == [{"name": "x", "count": 1}]
    api.post(reverse("note-archive", args=[note.pk]))
    assert api.get(tags_url()).json() == []
    api.post(reverse("note-unarchive", args=[note.pk]))
    api.delete(reverse("note-detail", args=[note.pk]))
    assert api.get(tags_url()).json() == []
