"""A write's answer shows what was just written without reading it back (issue 27): a new item
has no share link, and its tags are the ones just set."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from content.models import Note

pytestmark = pytest.mark.django_db


def _reads_back(queries: CaptureQueriesContext) -> list[str]:
    """The reads of the item's share link or tag links (a create needs neither)."""
    return [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith("SELECT") and ("content_share" in q["sql"] or "_tags" in q["sql"])
    ]


def test_a_create_answers_with_its_tags_and_no_share_without_reading_them(
    api: Any, owner: Any
) -> None:
    with CaptureQueriesContext(connection) as queries:
        response = api.post(
            reverse("note-list"),
            {"title": "T", "content": "x", "tags": ["beta", "alpha"]},
            format="json",
        )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["tags"], body["share"]) == (["alpha", "beta"], None)
    note = Note.objects.get(pk=body["id"])
    assert note.tag_names() == ["alpha", "beta"]
    assert _reads_back(queries) == []


def test_an_update_answers_with_its_new_tags_without_reading_them_back(
    api: Any, owner: Any
) -> None:
    created = api.post(reverse("note-list"), {"title": "T", "tags": ["a"]}, format="json").json()
    url = reverse("note-detail", args=[created["id"]])
    with CaptureQueriesContext(connection) as queries:
        response = api.patch(url, {"tags": ["b", "c"]}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["tags"] == ["b", "c"]
    assert Note.objects.get(pk=created["id"]).tag_names() == ["b", "c"]
    names_read = [sql for sql in _reads_back(queries) if 'SELECT "content_tag"."name"' in sql]
    assert len(names_read) == 1  # the tags before the change, read once under the row lock


def test_a_created_instance_refreshed_from_the_database_forgets_what_it_knew(owner: Any) -> None:
    from content.history import Actor
    from content.services import items

    note = items.create_item(owner=owner, model=Note, data={"title": "T"}, actor=Actor())
    assert note.tag_names() == []
    Note.objects.get(pk=note.pk).tags.create(owner=owner, name="later")
    note.refresh_from_db()
    assert note.tag_names() == ["later"]
