"""The change log's cursors, reads and retention (SPEC §17.1), on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from content.errors import CursorExpired
from content.history.changes import (
    ChangeRecord,
    Position,
    decode_cursor,
    encode_cursor,
    position_of,
    prune_changes,
    read_feed,
    record_changes,
)
from content.models.changes import Change
from content.tests.changes_support import wait_until_settled
from tiddly.errors import ValidationFailed

pytestmark = pytest.mark.django_db


def _record(owner: Any, n: int = 1, item_type: str = "note") -> list[Change]:
    return record_changes(
        [
            ChangeRecord(
                owner_id=owner.pk, item_type=item_type, item_id=uuid.uuid4(), action="created"
            )
            for _ in range(n)
        ]
    )


def test_a_cursor_round_trips_for_its_owner(owner: Any) -> None:
    cursor = encode_cursor(owner.pk, Position(123, 456))
    assert decode_cursor(owner.pk, cursor) == Position(123, 456)
    assert "123" not in cursor  # opaque


def test_another_owners_cursor_is_a_validation_error(owner: Any, other: Any) -> None:
    cursor = encode_cursor(other.pk, Position(1, 2))
    with pytest.raises(ValidationFailed) as caught:
        decode_cursor(owner.pk, cursor)
    assert "another feed" in caught.value.body()["fields"]["since"][0]


@pytest.mark.parametrize("garbage", ["", "x", "!!!", "a" * 500, "MS4xLjI", "é", "MS4tMS4yLmFiYw"])
def test_garbage_cursors_are_validation_errors(owner: Any, garbage: str) -> None:
    with pytest.raises(ValidationFailed):
        decode_cursor(owner.pk, garbage)


def test_following_next_cursor_pages_through_every_change_once(owner: Any, other: Any) -> None:
    mine = _record(owner, 7)
    _record(other, 3)
    seen: list[int] = []
    since = None
    for _ in range(10):
        page = read_feed(owner_id=owner.pk, since=since, types=["note"], limit=3)
        seen += [c.id for c in page.changes]
        since = page.next_position
        if not page.has_more:
            break
    assert seen == [c.id for c in mine]
    again = read_feed(owner_id=owner.pk, since=since, types=["note"], limit=3)
    assert again.changes == []
    assert again.has_more is False
    later = _record(owner, 1)
    assert [
        c.id for c in read_feed(owner_id=owner.pk, since=since, types=["note"], limit=3).changes
    ] == [later[0].id]


def test_types_narrow_the_feed_and_the_cursor_still_moves_past_the_others(owner: Any) -> None:
    _record(owner, 2, "bookmark")
    notes = _record(owner, 1, "note")
    page = read_feed(owner_id=owner.pk, since=None, types=["note"], limit=10)
    assert [c.id for c in page.changes] == [notes[0].id]
    assert page.next_position >= position_of(notes[0])


@pytest.mark.django_db(transaction=True)  # pruning takes settled (committed) rows only
def test_a_cursor_from_before_pruned_changes_is_expired(owner: Any, settings: Any) -> None:
    settings.TIDDLY_CHANGES_RETENTION_DAYS = 90
    old = _record(owner, 3)
    Change.objects.filter(id__in=[c.id for c in old]).update(at=timezone.now() - timedelta(days=91))
    kept = _record(owner, 1)
    before_all = read_feed(owner_id=owner.pk, since=None, types=["note"], limit=1).next_position
    wait_until_settled()
    assert prune_changes() == 3
    assert list(Change.objects.values_list("id", flat=True)) == [kept[0].id]
    with pytest.raises(CursorExpired) as caught:
        read_feed(owner_id=owner.pk, since=before_all, types=["note"], limit=10)
    assert caught.value.status_code == 410
    assert caught.value.body()["error"] == "cursor_expired"
    fresh = read_feed(owner_id=owner.pk, since=None, types=["note"], limit=10)
    assert [c.id for c in fresh.changes] == [kept[0].id]
    assert (
        read_feed(owner_id=owner.pk, since=fresh.next_position, types=["note"], limit=1).changes
        == []
    )
