"""Retention: at most N versions per item, only recent ones, always the newest (SPEC §6)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from content import history
from content.history import Actor
from content.models import ItemVersion, Note
from content.services import archive_item, unarchive_item
from content.tests.history_support import current, edit, make_note, numbers, ref, update
from tiddly.errors import NotFound

pytestmark = pytest.mark.django_db

WORDS = "".join(f"w{index:03d} " for index in range(200))


def edited_note(owner: Any, edits: int) -> tuple[Note, dict[int, str | None]]:
    """A note with versions 1..edits+1, and the content of each."""
    note = make_note(owner, WORDS)
    expected: dict[int, str | None] = {1: WORDS}
    for index in range(edits):
        edit(owner, note, f"w{index:03d}", f"E{index:03d}")
        expected[index + 2] = current(note)
    return note, expected


def age(note: Note, days: int, *versions: int) -> None:
    when = timezone.now() - timedelta(days=days)
    history.item_versions(note).filter(version__in=versions).update(created_at=when)


def assert_reconstructs(note: Note, expected: dict[int, str | None]) -> None:
    for number in numbers(note):
        assert history.reconstruct(note, number or 0) == expected[number or 0]


def test_writes_prune_beyond_the_newest_n_on_every_tenth_version(owner: Any, settings: Any) -> None:
    settings.TIDDLY_HISTORY_MAX_VERSIONS = 3
    note, expected = edited_note(owner, 8)
    assert numbers(note) == list(range(1, 10))  # nothing pruned before version 10
    edit(owner, note, "w008", "E008")
    expected[10] = current(note)
    assert numbers(note) == [8, 9, 10]
    assert_reconstructs(note, expected)


def test_versions_older_than_the_retention_days_go_but_the_newest_stays(
    owner: Any, settings: Any
) -> None:
    settings.TIDDLY_HISTORY_DAYS = 30
    note, expected = edited_note(owner, 4)
    age(note, 31, 1, 2, 3)
    assert history.prune_item("note", note.pk) == 3
    assert numbers(note) == [4, 5]
    assert_reconstructs(note, expected)
    age(note, 90, 4, 5)
    history.prune_item("note", note.pk)
    assert numbers(note) == [5]
    assert history.reconstruct(note, 5) == expected[5]


def test_pruning_drops_a_prefix_even_when_timestamps_are_out_of_order(
    owner: Any, settings: Any
) -> None:
    # A clock step back must not punch a hole in the chain that older versions depend on.
    note, expected = edited_note(owner, 5)
    age(note, 60, 4)
    history.prune_item("note", note.pk)
    assert numbers(note) == [5, 6]
    assert_reconstructs(note, expected)


def test_pruning_the_create_snapshot_keeps_reconstruction_exact(owner: Any, settings: Any) -> None:
    settings.TIDDLY_HISTORY_MAX_VERSIONS = 4
    settings.TIDDLY_HISTORY_SNAPSHOT_EVERY = 3
    note, expected = edited_note(owner, 12)
    history.prune_item("note", note.pk)
    assert numbers(note) == [10, 11, 12, 13]
    assert_reconstructs(note, expected)
    with pytest.raises(NotFound):
        history.reconstruct(note, 9)


def test_old_events_are_pruned_by_age_only(owner: Any, settings: Any) -> None:
    settings.TIDDLY_HISTORY_MAX_VERSIONS = 1
    note = make_note(owner)
    archive_item(owner=owner, ref=ref(note), actor=Actor())
    unarchive_item(owner=owner, ref=ref(note), actor=Actor())
    old = timezone.now() - timedelta(days=40)
    history.item_versions(note).filter(action="archive").update(created_at=old)
    history.prune_item("note", note.pk)
    assert [row.action for row in history.item_versions(note).order_by("created_at")] == [
        "create",
        "unarchive",
    ]


def test_prune_history_command_prunes_every_item_and_orphans(owner: Any, settings: Any) -> None:
    settings.TIDDLY_HISTORY_MAX_VERSIONS = 2
    busy, expected = edited_note(owner, 4)
    quiet = make_note(owner)
    orphan = make_note(owner)
    update(owner, orphan, title="edited")
    Note.objects.filter(pk=orphan.pk).delete()  # not through the services: history stays behind
    out = StringIO()
    call_command("prune_history", stdout=out)
    assert numbers(busy) == [4, 5]
    assert numbers(quiet) == [1]
    assert not ItemVersion.objects.filter(item_id=orphan.pk).exists()
    assert "Pruned 3 versions of 1 items, 0 events and 2 rows of deleted items" in out.getvalue()
    assert_reconstructs(busy, expected)


def test_prune_history_command_with_nothing_to_do_deletes_nothing(owner: Any) -> None:
    note, _ = edited_note(owner, 3)
    out = StringIO()
    call_command("prune_history", stdout=out)
    assert numbers(note) == [1, 2, 3, 4]
    assert out.getvalue().startswith("Pruned 0 versions of 0 items, 0 events and 0 rows")
