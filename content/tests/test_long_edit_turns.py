"""Edits of long contents take turns on SQLite (``content.services.turns``, issue 27)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction

from content.services import turns
from content.services.turns import LONG_CHARS, Turns, long_edits
from content.tests.history_support import edit, make_note

SQLITE = connection.vendor == "sqlite"


def _second_turn(gate: Turns, key: Any) -> tuple[threading.Thread, threading.Event]:
    """Start a thread that takes ``key``'s turn; the event is set once it has it."""
    got = threading.Event()

    def take() -> None:
        with gate.turn(key):
            got.set()

    thread = threading.Thread(target=take)
    thread.start()
    return thread, got


def test_an_edit_of_a_content_seen_long_waits_for_the_one_in_progress() -> None:
    gate = Turns()
    with gate.turn("note-1") as seen:
        seen(LONG_CHARS)
    with gate.turn("note-1"):
        thread, got = _second_turn(gate, "note-1")
        # SQLite writes one at a time, so the second waits; PostgreSQL's edits never wait.
        assert got.wait(0.3) is not SQLITE
    assert got.wait(5)
    thread.join()


def test_short_and_unseen_contents_never_wait() -> None:
    gate = Turns()
    with gate.turn("unseen"):
        thread, got = _second_turn(gate, "unseen")
        assert got.wait(5)
        thread.join()
    with gate.turn("shrunk") as seen:
        seen(LONG_CHARS)
    with gate.turn("shrunk") as seen:
        seen(LONG_CHARS - 1)  # shortened: forgotten
    assert not gate.is_long("shrunk")
    with gate.turn("shrunk"):
        thread, got = _second_turn(gate, "shrunk")
        assert got.wait(5)
        thread.join()


def test_a_turn_waited_for_too_long_goes_ahead() -> None:
    gate = Turns(wait=0.2)
    with gate.turn("slow") as seen:
        seen(LONG_CHARS)
    with gate.turn("slow"):
        started = time.monotonic()
        thread, got = _second_turn(gate, "slow")
        assert got.wait(5)
        thread.join()
    assert time.monotonic() - started < 5


@pytest.mark.django_db
def test_no_turn_is_taken_inside_a_callers_transaction() -> None:
    gate = Turns()
    with gate.turn("in-a-transaction") as seen:
        seen(LONG_CHARS)
    with transaction.atomic(), gate.turn("in-a-transaction"):
        # This thread may hold SQLite's write lock here: it took no turn, so others go on.
        thread, got = _second_turn(gate, "in-a-transaction")
        assert got.wait(5)
    thread.join()


def test_only_the_most_recently_seen_long_contents_are_remembered() -> None:
    gate = Turns(remembered=3)
    for key in range(5):
        with gate.turn(key) as seen:
            seen(LONG_CHARS)
    assert [key for key in range(5) if gate.is_long(key)] == [2, 3, 4]


@pytest.mark.django_db
def test_the_editing_service_reports_what_it_read(owner: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(turns, "LONG_CHARS", 1000)
    note = make_note(owner, "start " + "x" * 1200 + " end")
    key = ("note", note.pk, None)
    assert not long_edits.is_long(key)
    edit(owner, note, "start", "begin")
    assert long_edits.is_long(key)
    edit(owner, note, "x" * 1200, "y")
    assert not long_edits.is_long(key)
