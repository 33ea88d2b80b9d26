"""A permanent delete, and deleting a person in the admin, zeroes on SQLite what it frees
(``tiddly.sqlite.base.erasing``); other writes run with ``secure_delete`` FAST, so rewriting a
long content logs its pages once."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models.signals import pre_delete
from django.urls import reverse

from content.models import ItemVersion, Note
from content.tests.factories import NoteFactory
from content.tests.helpers import detail_url

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's secure_delete"),
]


def secure_delete() -> int:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA secure_delete")
        return int(cursor.fetchone()[0])


def test_a_permanent_delete_runs_its_deletes_with_secure_delete_on_then_fast_again(
    api: Any, owner: Any
) -> None:
    note = NoteFactory(owner=owner, content="secret " * 1000)
    api.patch(detail_url("note", note.pk), {"content": "still secret " * 1000}, format="json")
    seen: list[tuple[str, int]] = []

    def record(sender: Any, instance: Any, **kwargs: Any) -> None:
        seen.append((sender.__name__, secure_delete()))

    pre_delete.connect(record, weak=False)
    try:
        assert secure_delete() == 2  # FAST
        trashed = api.delete(detail_url("note", note.pk))
        purged = api.delete(detail_url("note", note.pk) + "?permanent=true")
    finally:
        pre_delete.disconnect(record)

    assert (trashed.status_code, purged.status_code) == (204, 204)
    assert not Note.objects.filter(pk=note.pk).exists()
    assert not ItemVersion.objects.filter(item_id=note.pk).exists()
    assert ("Note", 1) in seen
    assert all(level == 1 for _, level in seen)
    assert secure_delete() == 2


def test_deleting_a_person_in_the_admin_erases_what_their_items_free(
    admin_client: Any, other: Any
) -> None:
    note = NoteFactory(owner=other, content="their secret " * 1000)
    seen: list[tuple[str, int]] = []

    def record(sender: Any, instance: Any, **kwargs: Any) -> None:
        seen.append((sender.__name__, secure_delete()))

    url = reverse("admin:auth_user_delete", args=[other.pk])
    pre_delete.connect(record, weak=False)
    try:
        response = admin_client.post(url, {"post": "yes"})
    finally:
        pre_delete.disconnect(record)

    assert response.status_code == 302
    assert not get_user_model().objects.filter(pk=other.pk).exists()
    assert not Note.objects.filter(pk=note.pk).exists()
    assert {"Note", "User"} <= {name for name, _ in seen}
    assert all(level == 1 for _, level in seen)
    assert secure_delete() == 2
