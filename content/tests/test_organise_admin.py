"""Saved filters and an item's links in the admin (SPEC §9, §11, §12)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from content.history import Actor
from content.models import SavedFilter
from content.services import relationships
from content.services.filters import create_filter
from content.services.relationships import End
from content.tests.factories import BookmarkFactory, NoteFactory

pytestmark = pytest.mark.django_db


def make(owner: Any, name: str = "Work") -> SavedFilter:
    data = {"name": name, "content_types": ["note"], "expression": {"groups": [{"tags": ["w"]}]}}
    return create_filter(owner=owner, data=data)


def test_filters_are_listed_per_owner_and_editable(
    staff_client: Client, owner: Any, other: Any
) -> None:
    mine, theirs = make(owner), make(other, "Theirs")
    page = staff_client.get(reverse("admin:content_savedfilter_changelist"))
    assert page.status_code == 200
    assert {f.pk for f in page.context["cl"].result_list} == {mine.pk}
    url = reverse("admin:content_savedfilter_change", args=[theirs.pk])
    assert staff_client.get(url).status_code in (302, 403, 404)
    url = reverse("admin:content_savedfilter_change", args=[mine.pk])
    body = {
        "name": "Renamed",
        "content_types": '["note", "bookmark"]',
        "expression": '{"groups": [{"tags": ["Client-A"]}]}',
        "default_sort_by": "title",
        "default_sort_order": "asc",
    }
    assert staff_client.post(url, body).status_code == 302
    mine.refresh_from_db()
    assert (mine.name, mine.groups, mine.content_types) == (
        "Renamed",
        [["client-a"]],
        ["bookmark", "note"],
    )


def test_an_invalid_filter_shows_the_services_message_and_saves_nothing(
    staff_client: Client, owner: Any
) -> None:
    body = {
        "name": "Bad",
        "content_types": '["note"]',
        "expression": '{"groups": [{"tags": ["Not Valid!"]}]}',
        "default_sort_order": "desc",
    }
    page = staff_client.post(reverse("admin:content_savedfilter_add"), body)
    assert page.status_code == 200
    assert "Invalid tag" in page.content.decode()
    assert not SavedFilter.objects.exists()


def test_an_items_page_lists_its_links(staff_client: Client, owner: Any) -> None:
    note = NoteFactory(owner=owner, title="The note")
    bookmark = BookmarkFactory(owner=owner, title="The article")
    relationships.create_link(
        owner=owner,
        source=End("note", note.pk),
        target=End("bookmark", bookmark.pk),
        description="read with",
        actor=Actor(),
    )
    page = staff_client.get(reverse("admin:content_note_change", args=[note.pk])).content.decode()
    assert reverse("admin:content_bookmark_change", args=[bookmark.pk]) in page
    assert "The article" in page


def test_a_tag_used_by_a_filter_cannot_be_deleted_in_the_admin(
    staff_client: Client, owner: Any
) -> None:
    make(owner)
    tag = owner.tags.get(name="w")
    page = staff_client.post(reverse("admin:content_tag_delete", args=[tag.pk]), {"post": "yes"})
    assert page.status_code == 200
    assert "Saved filter: Work" in page.content.decode()
    assert owner.tags.filter(name="w").exists()
