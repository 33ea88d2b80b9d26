"""/api/relationships/ and ``relationships`` on an item's page (SPEC §12)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from content.models import ItemVersion, Relationship
from content.tests.factories import BookmarkFactory, NoteFactory, PromptFactory
from content.tests.helpers import assert_error, detail_url

pytestmark = pytest.mark.django_db

LIST = "relationship-list"


def link_url(pk: Any) -> str:
    return reverse("relationship-detail", args=[pk])


def link_body(a: Any, b: Any, **extra: Any) -> dict[str, Any]:
    return {
        "source_type": a.type_name,
        "source_id": str(a.pk),
        "target_type": b.type_name,
        "target_id": str(b.pk),
        **extra,
    }


def events(item: Any, action: str) -> int:
    return ItemVersion.objects.filter(item_id=item.pk, action=action).count()


def test_linking_returns_201_then_200_with_the_same_link_in_either_order(
    api: Any, owner: Any
) -> None:
    note, bookmark = NoteFactory(owner=owner), BookmarkFactory(owner=owner)
    before = note.updated_at
    first = api.post(reverse(LIST), link_body(note, bookmark, description="why"), format="json")
    assert first.status_code == 201
    data = first.json()
    assert {(data["source_type"], data["source_id"]), (data["target_type"], data["target_id"])} == {
        ("note", str(note.pk)),
        ("bookmark", str(bookmark.pk)),
    }
    assert data["description"] == "why"
    again = api.post(reverse(LIST), link_body(bookmark, note, description="other"), format="json")
    assert again.status_code == 200
    assert again.json() == data
    assert Relationship.objects.count() == 1
    assert (events(note, "link"), events(bookmark, "link")) == (1, 1)
    note.refresh_from_db()
    assert note.updated_at == before


def test_the_database_refuses_a_second_row_for_the_same_pair(owner: Any) -> None:
    a, b = sorted([NoteFactory(owner=owner), NoteFactory(owner=owner)], key=lambda i: i.pk)
    pair = {"source_type": "note", "target_type": "note"}
    Relationship.objects.create(owner=owner, source_id=a.pk, target_id=b.pk, **pair)
    with pytest.raises(IntegrityError), transaction.atomic():
        Relationship.objects.create(owner=owner, source_id=a.pk, target_id=b.pk, **pair)
    with pytest.raises(IntegrityError), transaction.atomic():  # not canonical: check constraint
        Relationship.objects.create(owner=owner, source_id=b.pk, target_id=a.pk, **pair)


def test_an_item_cannot_link_to_itself(api: Any, owner: Any) -> None:
    note = NoteFactory(owner=owner)
    err = assert_error(
        api.post(reverse(LIST), link_body(note, note), format="json"), 400, "validation_error"
    )
    assert "target_id" in err["fields"]
    assert Relationship.objects.count() == 0


def test_a_strangers_or_trashed_item_on_either_end_is_404(api: Any, owner: Any, other: Any) -> None:
    mine, theirs = NoteFactory(owner=owner), NoteFactory(owner=other)
    trashed = BookmarkFactory(owner=owner, deleted_at=timezone.now())
    for a, b in [(mine, theirs), (theirs, mine), (mine, trashed)]:
        assert_error(api.post(reverse(LIST), link_body(a, b), format="json"), 404, "not_found")
    assert Relationship.objects.count() == 0
    assert ItemVersion.objects.filter(action="link").count() == 0


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"source_type": "video"}, 400, "validation_error"),
        ({"source_id": "nope"}, 400, "validation_error"),
        ({"description": "x" * 501}, 400, "field_limit_exceeded"),
        ({"colour": "red"}, 400, "validation_error"),
        ({"target_type": "prompt"}, 404, "not_found"),  # the id is a bookmark's
    ],
)
def test_bad_input_changes_nothing(
    api: Any, owner: Any, change: dict[str, Any], status: int, code: str
) -> None:
    note, bookmark = NoteFactory(owner=owner), BookmarkFactory(owner=owner)
    assert_error(
        api.post(reverse(LIST), {**link_body(note, bookmark), **change}, format="json"),
        status,
        code,
    )
    assert Relationship.objects.count() == 0


def test_an_item_has_at_most_50_links(api: Any, owner: Any) -> None:
    hub = NoteFactory(owner=owner)
    for _ in range(50):
        response = api.post(reverse(LIST), link_body(hub, NoteFactory(owner=owner)), format="json")
        assert response.status_code == 201
    extra = NoteFactory(owner=owner)
    err = assert_error(
        api.post(reverse(LIST), link_body(extra, hub), format="json"), 400, "field_limit_exceeded"
    )
    assert (err["field"], err["limit"]) == ("relationships", 50)
    assert Relationship.objects.count() == 50


def test_list_one_items_links_describe_and_delete(api: Any, owner: Any) -> None:
    note, bookmark, prompt = (
        NoteFactory(owner=owner),
        BookmarkFactory(owner=owner),
        PromptFactory(owner=owner),
    )
    one = api.post(reverse(LIST), link_body(note, bookmark), format="json").json()
    api.post(reverse(LIST), link_body(bookmark, prompt), format="json")
    listed = api.get(reverse(LIST), {"type": "note", "id": str(note.pk)}).json()
    assert [r["id"] for r in listed["results"]] == [one["id"]]
    assert api.get(reverse(LIST)).json()["count"] == 2
    patched = api.patch(link_url(one["id"]), {"description": "read together"}, format="json")
    assert patched.json()["description"] == "read together"
    assert api.get(link_url(one["id"])).json()["description"] == "read together"
    assert api.delete(link_url(one["id"])).status_code == 204
    assert not Relationship.objects.filter(pk=one["id"]).exists()
    assert (events(note, "unlink"), events(bookmark, "unlink")) == (1, 1)


def test_list_query_needs_type_and_id_together(api: Any) -> None:
    assert_error(api.get(reverse(LIST), {"type": "note"}), 400, "validation_error")


def test_strangers_cannot_see_or_touch_links(api: Any, other_api: Any, other: Any) -> None:
    a, b = NoteFactory(owner=other), NoteFactory(owner=other)
    theirs = other_api.post(reverse(LIST), link_body(a, b), format="json").json()
    assert api.get(reverse(LIST)).json()["count"] == 0
    assert_error(api.get(reverse(LIST), {"type": "note", "id": str(a.pk)}), 404, "not_found")
    assert_error(api.get(link_url(theirs["id"])), 404, "not_found")
    assert_error(
        api.patch(link_url(theirs["id"]), {"description": "x"}, format="json"), 404, "not_found"
    )
    assert_error(api.delete(link_url(theirs["id"])), 404, "not_found")
    assert Relationship.objects.get(pk=theirs["id"]).description is None


def test_anonymous_is_401(anon: Any) -> None:
    assert_error(anon.get(reverse(LIST)), 401, "not_authenticated")


def test_an_items_page_lists_the_other_ends_without_trashed_ones(api: Any, owner: Any) -> None:
    note = NoteFactory(owner=owner)
    bookmark = BookmarkFactory(owner=owner, title="", url="https://example.com/x")
    prompt = PromptFactory(owner=owner, title="P")
    gone = NoteFactory(owner=owner)
    for other_end in (bookmark, prompt, gone):
        api.post(reverse(LIST), link_body(other_end, note, description="d"), format="json")
    api.delete(detail_url("note", gone.pk))
    rels = api.get(detail_url("note", note.pk)).json()["relationships"]
    assert [(r["type"], r["id"], r["title"], r["description"]) for r in rels] == [
        ("bookmark", str(bookmark.pk), "example.com/x", "d"),  # SPEC §9's display title
        ("prompt", str(prompt.pk), "P", "d"),
    ]
    assert api.get(detail_url("bookmark", bookmark.pk)).json()["relationships"][0]["id"] == str(
        note.pk
    )


@pytest.mark.parametrize("n", [1, 30])
def test_an_items_page_takes_a_constant_number_of_queries(
    api: Any, owner: Any, django_assert_max_num_queries: Any, n: int
) -> None:
    note = NoteFactory(owner=owner)
    for i in range(n):
        other_end = [NoteFactory, BookmarkFactory, PromptFactory][i % 3](owner=owner)
        api.post(reverse(LIST), link_body(note, other_end), format="json")
    api.get(detail_url("note", note.pk))
    # The item, its tags, the links and one query per type at the other ends.
    with django_assert_max_num_queries(7):
        response = api.get(detail_url("note", note.pk))
    assert len(response.json()["relationships"]) == n


def test_permanent_delete_removes_the_items_links(api: Any, owner: Any) -> None:
    note, bookmark = NoteFactory(owner=owner), BookmarkFactory(owner=owner)
    api.post(reverse(LIST), link_body(note, bookmark), format="json")
    response = api.delete(detail_url("note", note.pk) + "?permanent=true")
    assert response.status_code == 204
    assert Relationship.objects.count() == 0
    assert api.get(detail_url("bookmark", bookmark.pk)).json()["relationships"] == []
