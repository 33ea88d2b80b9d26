"""/api/notes/: create, retrieve, PATCH semantics and field limits (SPEC §2, §3.1)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from content.models import Note
from content.tests.factories import NoteFactory
from content.tests.helpers import assert_error, db_state, detail_url, list_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def note(owner: Any) -> Note:
    return NoteFactory(
        owner=owner, title="Groceries", description="weekly", content="milk\neggs", tags=["home"]
    )


# --- create -------------------------------------------------------------------------------------


def test_create_note_returns_201_with_full_item_and_stores_row(api: Any, owner: Any) -> None:
    response = api.post(
        list_url("note"),
        {
            "title": "Plan",
            "description": "Q3",
            "content": "line 1\nline 2",
            "tags": [" Work ", "work", "Planning"],
        },
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    note = Note.objects.get(pk=body["id"])
    assert note.owner == owner
    assert body["type"] == "note"
    assert body["title"] == note.title == "Plan"
    assert body["description"] == "Q3"
    assert body["content"] == note.content == "line 1\nline 2"
    assert body["tags"] == ["planning", "work"] == note.tag_names()
    assert body["state"] == "active"
    assert body["content_length"] == 13
    assert body["content_metadata"] == {
        "total_lines": 2,
        "start_line": 1,
        "end_line": 2,
        "is_partial": False,
    }
    assert body["archived_at"] is None
    assert body["deleted_at"] is None
    assert body["created_at"] == body["updated_at"] == body["last_used_at"]
    assert note.last_used_at == note.created_at
    assert response["ETag"]


def test_create_note_without_content_has_null_content_and_metadata(api: Any) -> None:
    response = api.post(list_url("note"), {"title": "Empty"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["content"] is None
    assert body["content_metadata"] is None
    assert body["content_length"] is None


@pytest.mark.parametrize("title", ["", "   ", None])
def test_create_note_without_a_title_is_400(api: Any, title: Any) -> None:
    response = api.post(list_url("note"), {"title": title, "content": "x"}, format="json")
    body = assert_error(response, 400, "validation_error")
    assert "title" in body["fields"]
    assert not Note.objects.exists()


def test_create_note_missing_title_key_is_400(api: Any) -> None:
    body = assert_error(
        api.post(list_url("note"), {"content": "x"}, format="json"), 400, "validation_error"
    )
    assert "title" in body["fields"]


def test_create_note_keeps_whitespace_of_content_verbatim(api: Any) -> None:
    content = "    indented\n\ttabbed  \n"
    response = api.post(list_url("note"), {"title": "t", "content": content}, format="json")
    assert response.json()["content"] == content
    assert Note.objects.get().content == content


def test_create_note_with_invalid_tag_is_400_naming_the_tag(api: Any) -> None:
    response = api.post(
        list_url("note"), {"title": "t", "tags": ["ok", "not valid!"]}, format="json"
    )
    body = assert_error(response, 400, "validation_error")
    assert "not valid!" in body["message"]
    assert not Note.objects.exists()


def test_create_note_with_more_than_100_tags_is_400(api: Any) -> None:
    tags = [f"t{i}" for i in range(101)]
    response = api.post(list_url("note"), {"title": "t", "tags": tags}, format="json")
    assert_error(response, 400, "validation_error")
    assert not Note.objects.exists()


def test_create_note_with_future_archived_at_is_scheduled_and_active(api: Any) -> None:
    later = timezone.now() + timedelta(days=3)
    response = api.post(
        list_url("note"), {"title": "t", "archived_at": later.isoformat()}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["state"] == "active"
    assert Note.objects.get().archived_at == later


# --- field limits -------------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "limit"), [("title", 200), ("description", 1000)])
def test_create_note_with_oversized_field_is_400_naming_field_length_and_limit(
    api: Any, field: str, limit: int
) -> None:
    body = {"title": "t", field: "x" * (limit + 1)}
    error = assert_error(
        api.post(list_url("note"), body, format="json"), 400, "field_limit_exceeded"
    )
    assert error["field"] == field
    assert error["length"] == limit + 1
    assert error["limit"] == limit
    assert str(limit) in error["message"]
    assert field in error["message"]
    assert not Note.objects.exists()


@pytest.mark.parametrize(("field", "limit"), [("title", 200), ("description", 1000)])
def test_note_field_exactly_at_the_limit_is_accepted(api: Any, field: str, limit: int) -> None:
    body = {"title": "t", field: "x" * limit}
    assert api.post(list_url("note"), body, format="json").status_code == 201


def test_content_over_the_configured_limit_is_400_on_create_and_patch(
    api: Any, note: Note, settings: Any
) -> None:
    settings.TIDDLY_LIMITS = {**settings.TIDDLY_LIMITS, "content": 20}
    response = api.post(list_url("note"), {"title": "t", "content": "y" * 21}, format="json")
    error = assert_error(response, 400, "field_limit_exceeded")
    assert (error["field"], error["length"], error["limit"]) == ("content", 21, 20)
    before = db_state()
    response = api.patch(detail_url("note", note.pk), {"content": "z" * 25}, format="json")
    error = assert_error(response, 400, "field_limit_exceeded")
    assert (error["field"], error["length"], error["limit"]) == ("content", 25, 20)
    assert db_state() == before
    ok = api.post(list_url("note"), {"title": "t", "content": "y" * 20}, format="json")
    assert ok.status_code == 201


def test_title_limit_follows_the_settings(api: Any, settings: Any) -> None:
    settings.TIDDLY_LIMITS = {**settings.TIDDLY_LIMITS, "title": 5}
    error = assert_error(
        api.post(list_url("note"), {"title": "abcdef"}, format="json"), 400, "field_limit_exceeded"
    )
    assert error["limit"] == 5


# --- retrieve -----------------------------------------------------------------------------------


def test_get_note_returns_full_item_with_etag(api: Any, note: Note) -> None:
    response = api.get(detail_url("note", note.pk))
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == str(note.pk)
    assert body["content"] == "milk\neggs"
    assert body["tags"] == ["home"]
    assert body["content_metadata"]["total_lines"] == 2
    assert response["ETag"].startswith('"')


@pytest.mark.parametrize(
    ("archived", "deleted", "state"),
    [(True, False, "archived"), (False, True, "deleted"), (True, True, "deleted")],
)
def test_get_note_works_for_archived_and_deleted_notes(
    api: Any, owner: Any, archived: bool, deleted: bool, state: str
) -> None:
    past = timezone.now() - timedelta(hours=1)
    note = NoteFactory(
        owner=owner, archived_at=past if archived else None, deleted_at=past if deleted else None
    )
    response = api.get(detail_url("note", note.pk))
    assert response.status_code == 200
    assert response.json()["state"] == state


def test_get_unknown_note_is_404(api: Any) -> None:
    assert_error(
        api.get(detail_url("note", "0190b8a4-0000-7000-8000-000000000000")), 404, "not_found"
    )


# --- PATCH --------------------------------------------------------------------------------------


def test_patch_changes_only_the_given_fields(api: Any, note: Note) -> None:
    response = api.patch(detail_url("note", note.pk), {"description": "daily"}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["description"] == "daily"
    assert body["title"] == "Groceries"
    assert body["content"] == "milk\neggs"
    assert body["tags"] == ["home"]
    note.refresh_from_db()
    assert (note.title, note.description, note.content) == ("Groceries", "daily", "milk\neggs")


@pytest.mark.parametrize("field", ["description", "content", "archived_at"])
def test_patch_explicit_null_clears_a_nullable_field(api: Any, note: Note, field: str) -> None:
    Note.objects.filter(pk=note.pk).update(archived_at=timezone.now() - timedelta(days=1))
    response = api.patch(detail_url("note", note.pk), {field: None}, format="json")
    assert response.status_code == 200
    assert response.json()[field] is None
    note.refresh_from_db()
    assert getattr(note, field) is None


def test_patch_null_content_clears_metadata_too(api: Any, note: Note) -> None:
    body = api.patch(detail_url("note", note.pk), {"content": None}, format="json").json()
    assert body["content_metadata"] is None
    assert body["content_length"] is None


@pytest.mark.parametrize("title", [None, "", "  "])
def test_patch_note_title_to_null_or_blank_is_400_and_writes_nothing(
    api: Any, note: Note, title: Any
) -> None:
    before = db_state()
    body = assert_error(
        api.patch(detail_url("note", note.pk), {"title": title}, format="json"),
        400,
        "validation_error",
    )
    assert "title" in body["fields"]
    assert db_state() == before


def test_patch_tags_replaces_the_whole_list_and_normalises(api: Any, note: Note) -> None:
    response = api.patch(
        detail_url("note", note.pk), {"tags": ["B-Side", " a ", "b-side"]}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["tags"] == ["a", "b-side"]
    assert note.tag_names() == ["a", "b-side"]


def test_patch_empty_tags_removes_all_tags(api: Any, note: Note) -> None:
    response = api.patch(detail_url("note", note.pk), {"tags": []}, format="json")
    assert response.json()["tags"] == []
    assert note.tag_names() == []


def test_patch_with_same_values_keeps_updated_at(api: Any, note: Note) -> None:
    before = Note.objects.get(pk=note.pk).updated_at
    response = api.patch(
        detail_url("note", note.pk),
        {"title": "Groceries", "content": "milk\neggs", "tags": ["HOME"]},
        format="json",
    )
    assert response.status_code == 200
    note.refresh_from_db()
    assert note.updated_at == before
    assert response.json()["updated_at"].startswith(before.strftime("%Y-%m-%dT%H:%M:%S"))


def test_patch_with_empty_body_keeps_updated_at(api: Any, note: Note) -> None:
    before = note.updated_at
    assert api.patch(detail_url("note", note.pk), {}, format="json").status_code == 200
    note.refresh_from_db()
    assert note.updated_at == before


@pytest.mark.parametrize(
    "change", [{"title": "New"}, {"content": "bread"}, {"tags": ["shop"]}, {"description": None}]
)
def test_patch_with_a_real_change_bumps_updated_at(
    api: Any, note: Note, change: dict[str, Any]
) -> None:
    before = note.updated_at
    response = api.patch(detail_url("note", note.pk), change, format="json")
    assert response.status_code == 200
    note.refresh_from_db()
    assert note.updated_at > before


def test_patch_archived_at_alone_saves_it_without_bumping_updated_at(api: Any, note: Note) -> None:
    before = note.updated_at
    past = timezone.now() - timedelta(minutes=5)
    response = api.patch(
        detail_url("note", note.pk), {"archived_at": past.isoformat()}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["state"] == "archived"
    note.refresh_from_db()
    assert note.archived_at == past
    assert note.updated_at == before


def test_patch_future_archived_at_schedules_the_archive(api: Any, note: Note) -> None:
    later = timezone.now() + timedelta(days=1)
    response = api.patch(
        detail_url("note", note.pk), {"archived_at": later.isoformat()}, format="json"
    )
    assert response.json()["state"] == "active"
    listed = api.get(list_url("note")).json()
    assert [item["id"] for item in listed["results"]] == [str(note.pk)]


def test_patch_of_oversized_title_is_400_and_writes_nothing(api: Any, note: Note) -> None:
    before = db_state()
    error = assert_error(
        api.patch(detail_url("note", note.pk), {"title": "t" * 201}, format="json"),
        400,
        "field_limit_exceeded",
    )
    assert (error["field"], error["length"], error["limit"]) == ("title", 201, 200)
    assert db_state() == before
