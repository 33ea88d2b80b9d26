"""Admin list columns: each label belongs to its column, and content length sorts (SPEC §9)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from content.models import Note
from content.tests.factories import NoteFactory

pytestmark = pytest.mark.django_db


def test_content_length_and_linked_items_carry_their_own_labels() -> None:
    note_admin = admin.site._registry[Note]
    assert note_admin.content_length.short_description == "content length"
    assert note_admin.content_length.admin_order_field == "content_chars"
    assert note_admin.linked_items.short_description == "linked items"
    assert not hasattr(note_admin.linked_items, "admin_order_field")


def test_the_changelist_sorts_by_content_length(staff_client: Client, staff: Any) -> None:
    for title, size in (("qq-short", 3), ("qq-long", 300), ("qq-middle", 30)):
        NoteFactory(owner=staff, title=title, content="x" * size)
    url = reverse("admin:content_note_changelist")
    html = staff_client.get(url).content.decode()
    assert 'class="sortable column-content_length' in html  # the header is a sort link
    columns = re.findall(r'<th scope="col"\s+class="([^"]*)"', html)
    column = next(i for i, css in enumerate(columns) if "column-content_length" in css)
    ordered = staff_client.get(url, {"o": f"-{column}"}).content.decode()
    assert ordered.index("qq-long") < ordered.index("qq-middle") < ordered.index("qq-short")
