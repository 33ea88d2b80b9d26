"""The change feed's promise under concurrency (SPEC §17.1), proven on PostgreSQL.

Writer threads append changes in transactions that take their transaction id early and commit
late, out of order, some rolling back; a poller thread follows ``next_cursor`` the whole time. It
must see every committed change exactly once, in increasing positions, and nothing rolled back.

One writer forces the case a naive id cursor gets wrong: it inserts a change, then holds its
transaction open until a naive poller (``id > last id``) has moved past that id on later committed
rows, and only then commits — the naive poller misses it, the feed does not.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from content.history.changes import ChangeRecord, Position, position_of, read_feed, record_changes
from content.models.changes import Change

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="concurrent out-of-order commits exist only on PostgreSQL (SQLite serialises)",
    ),
]

WRITERS = 6
TRANSACTIONS_EACH = 12
DEADLINE_SECONDS = 90.0


class Rollback(Exception):
    pass


def _change(owner_id: int, n: int) -> ChangeRecord:
    return ChangeRecord(
        owner_id=owner_id, item_type="note", item_id=uuid.uuid4(), action="updated", version=n
    )


class Ledger:
    """What writers committed and rolled back, by change id."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.committed: set[int] = set()
        self.rolled_back: set[int] = set()
        self.errors: list[BaseException] = []


def _writer(owner_id: int, seed: int, ledger: Ledger) -> None:
    rng = random.Random(seed)
    try:
        for n in range(TRANSACTIONS_EACH):
            ids: list[int] = []
            abort = rng.random() < 0.2
            try:
                with transaction.atomic():
                    ids += [c.id for c in record_changes([_change(owner_id, n)])]
                    time.sleep(rng.uniform(0, 0.03))  # hold the transaction open
                    ids += [c.id for c in record_changes([_change(owner_id, n)] * 2)]
                    if abort:
                        raise Rollback
            except Rollback:
                with ledger.lock:
                    ledger.rolled_back.update(ids)
                continue
            with ledger.lock:
                ledger.committed.update(ids)
    except BaseException as exc:  # surfaced by the test thread
        ledger.errors.append(exc)
    finally:
        connection.close()


def _naive_seen_past(target: int) -> bool:
    """Whether an ``id > cursor`` poller has already moved past ``target`` (a later id is
    committed and visible)."""
    return Change.objects.filter(id__gt=target).exists()


def _late_committer(owner_id: int, ledger: Ledger, naive_passed: threading.Event) -> None:
    try:
        with transaction.atomic():
            (row,) = record_changes([_change(owner_id, 0)])
            deadline = time.monotonic() + DEADLINE_SECONDS / 3
            while not _naive_seen_past(row.id) and time.monotonic() < deadline:
                time.sleep(0.01)
            naive_passed.set()
        with ledger.lock:
            ledger.committed.add(row.id)
    except BaseException as exc:
        ledger.errors.append(exc)
    finally:
        connection.close()


def _poll(owner_id: int, done: threading.Event, out: dict[str, Any]) -> None:
    seen: list[int] = []
    positions: list[Position] = []
    since: Position | None = None
    polls = 0
    deadline = time.monotonic() + DEADLINE_SECONDS
    try:
        while time.monotonic() < deadline and polls < 100_000:
            finished = done.is_set()  # read before the poll: a poll after it saw everything
            page = read_feed(owner_id=owner_id, since=since, types=["note"], limit=7)
            polls += 1
            seen += [c.id for c in page.changes]
            positions += [position_of(c) for c in page.changes]
            since = page.next_position
            if finished and not page.has_more and out["expected"] <= set(seen):
                break
            if not page.changes:
                time.sleep(0.005)
    except BaseException as exc:
        out["error"] = exc
    finally:
        out.update(seen=seen, positions=positions, polls=polls)
        connection.close()


def test_a_poller_following_next_cursor_sees_every_committed_change_exactly_once() -> None:
    owner = get_user_model().objects.create_user(username="poller-owner")
    ledger = Ledger()
    done = threading.Event()
    naive_passed = threading.Event()
    out: dict[str, Any] = {"expected": set()}
    late = threading.Thread(target=_late_committer, args=(owner.pk, ledger, naive_passed))
    writers = [
        threading.Thread(target=_writer, args=(owner.pk, seed, ledger)) for seed in range(WRITERS)
    ]
    poller = threading.Thread(target=_poll, args=(owner.pk, done, out))
    late.start()
    time.sleep(0.2)  # the late committer holds the oldest open transaction
    poller.start()
    for thread in writers:
        thread.start()
    for thread in [late, *writers]:
        thread.join(DEADLINE_SECONDS)
    out["expected"] = set(ledger.committed)
    done.set()
    poller.join(DEADLINE_SECONDS)

    assert not ledger.errors, ledger.errors
    assert "error" not in out, out.get("error")
    assert naive_passed.is_set()
    seen = out["seen"]
    assert len(seen) == len(set(seen)), "a change was handed out twice"
    assert set(seen) == ledger.committed, (
        f"missed {sorted(ledger.committed - set(seen))}, extra {sorted(set(seen) - ledger.committed)}"
    )
    assert not set(seen) & ledger.rolled_back
    assert out["positions"] == sorted(out["positions"])
    assert len(ledger.committed) == WRITERS * TRANSACTIONS_EACH * 3 - len(ledger.rolled_back) + 1
