"""The feed waits only for what it must (SPEC §17.1, round 4): other databases, idle sessions and
other owners' open writes hold back no one's feed; an owner's own open write holds back only that
owner's later changes. Idle webhooks write nothing; pruning goes in batches of plain SQL."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from content.history.changes import (
    ChangeRecord,
    Position,
    prune_changes,
    pruned_through,
    read_feed,
    record_changes,
)
from content.models.changes import Change
from content.models.webhooks import Webhook
from content.services import webhooks

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="transaction ids and other sessions: PostgreSQL"
)
SETTLE_SECONDS = 5.0  # a bound for the wait, not a timing assertion: old code never settles


def _record(owner_id: Any, at: Any = None) -> Change:
    (row,) = record_changes(
        [ChangeRecord(owner_id=owner_id, item_type="note", item_id=uuid.uuid4(), action="created")]
    )
    if at is not None:
        Change.objects.filter(pk=row.pk).update(at=at)
    return row


def _seen(owner_id: Any, row: Change, since: Position | None = None) -> bool:
    """Whether ``row`` reaches the owner's feed within SETTLE_SECONDS (polling, as clients do)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        page = read_feed(owner_id=owner_id, since=since, types=["note"], limit=500)
        if row.pk in {c.pk for c in page.changes}:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def _server(dbname: str) -> str:
    db = connection.settings_dict
    return f"host={db['HOST']} port={db['PORT']} user={db['USER']} dbname={dbname}"


@pytest.fixture
def scratch_database() -> Iterator[str]:
    name = f"tiddly_scratch_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(_server("postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(_server("postgres"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class OpenWrite:
    """A transaction of ``owner_id`` (in its own thread and connection) that records a change
    and stays open until ``finish()``."""

    def __init__(self, owner_id: Any) -> None:
        self.owner_id, self.row = owner_id, None
        self.recorded, self.done = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._run)
        self.thread.start()
        assert self.recorded.wait(30)

    def _run(self) -> None:
        try:
            with transaction.atomic():
                self.row = _record(self.owner_id)
                self.recorded.set()
                self.done.wait(60)
        finally:
            self.recorded.set()
            connection.close()

    def finish(self) -> None:
        self.done.set()
        self.thread.join(30)


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_an_open_transaction_in_another_database_does_not_stop_the_feed(
    scratch_database: str,
) -> None:
    owner = get_user_model().objects.create_user(username="feed-owner")
    with psycopg.connect(_server(scratch_database)) as idle:  # BEGIN: holds an xid, idle
        idle.execute("CREATE TABLE t (n int)")
        idle.execute("SELECT pg_current_xact_id()")
        row = _record(owner.pk)
        assert _seen(owner.pk, row)
        idle.rollback()


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_an_idle_session_of_this_database_does_not_stop_the_feed() -> None:
    owner = get_user_model().objects.create_user(username="feed-owner")
    with psycopg.connect(_server(connection.settings_dict["NAME"])) as idle:
        idle.execute("SELECT pg_current_xact_id()")  # an xid, then idle in transaction
        row = _record(owner.pk)
        assert _seen(owner.pk, row)
        idle.rollback()


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_another_owners_open_write_does_not_hold_back_the_feed() -> None:
    users = get_user_model().objects
    owner, other = users.create_user(username="feed-owner"), users.create_user(username="other")
    importing = OpenWrite(other.pk)  # as a long import of the other owner
    try:
        row = _record(owner.pk)
        assert _seen(owner.pk, row)
    finally:
        importing.finish()
    assert importing.row is not None
    assert _seen(other.pk, importing.row)


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_feed_read_scans_the_lock_table_only_while_a_write_of_its_owner_is_open() -> None:
    users = get_user_model().objects
    owner, other = users.create_user(username="feed-owner"), users.create_user(username="other")
    importing = OpenWrite(other.pk)
    try:
        row = _record(owner.pk)
        with CaptureQueriesContext(connection) as quiet:
            page = read_feed(owner_id=owner.pk, since=None, types=["note"], limit=500)
        assert [c.pk for c in page.changes] == [row.pk]
        writing = OpenWrite(owner.pk)
        try:
            with CaptureQueriesContext(connection) as busy:
                page = read_feed(owner_id=owner.pk, since=None, types=["note"], limit=500)
            assert [c.pk for c in page.changes] == [row.pk]
        finally:
            writing.finish()
    finally:
        importing.finish()
    assert not [q for q in quiet.captured_queries if "pg_locks" in q["sql"]]
    assert [q for q in busy.captured_queries if "pg_locks" in q["sql"]]


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_an_owners_own_open_write_holds_back_only_its_later_changes() -> None:
    users = get_user_model().objects
    owner, other = users.create_user(username="feed-owner"), users.create_user(username="other")
    before = _record(owner.pk)
    assert _seen(owner.pk, before)
    open_write = OpenWrite(owner.pk)
    try:
        later = _record(owner.pk)  # committed, but after the open write's change
        theirs = _record(other.pk)
        assert _seen(other.pk, theirs)
        page = read_feed(owner_id=owner.pk, since=None, types=["note"], limit=500)
        assert [c.pk for c in page.changes] == [before.pk]
        since = page.next_position
    finally:
        open_write.finish()
    assert open_write.row is not None
    assert _seen(owner.pk, later, since)
    page = read_feed(owner_id=owner.pk, since=since, types=["note"], limit=500)
    assert [c.pk for c in page.changes] == [open_write.row.pk, later.pk]


@pytest.mark.django_db(transaction=True)
def test_an_idle_webhook_writes_nothing_while_other_owners_write(settings: Any) -> None:
    users = get_user_model().objects
    owner, other = users.create_user(username="feed-owner"), users.create_user(username="other")
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1:8121"]
    hook = webhooks.create_webhook(owner=owner, url="http://127.0.0.1:8121/hook")
    position = Webhook.objects.values_list("fed_xid", "fed_change_id").get(pk=hook.pk)
    for _ in range(3):
        _record(other.pk)
        with CaptureQueriesContext(connection) as queries:
            assert webhooks.dispatch() == 0
        writes = [
            q["sql"] for q in queries.captured_queries if not q["sql"].lstrip().startswith("SELECT")
        ]
        assert writes == []
    assert Webhook.objects.values_list("fed_xid", "fed_change_id").get(pk=hook.pk) == position


@pytest.mark.django_db(transaction=True)
def test_prune_deletes_in_batches_of_sql_and_stops_at_the_first_row_kept(settings: Any) -> None:
    owner = get_user_model().objects.create_user(username="feed-owner")
    old = timezone.now() - timedelta(days=settings.TIDDLY_CHANGES_RETENTION_DAYS + 1)
    expired = [_record(owner.pk, at=old) for _ in range(25)]
    kept = _record(owner.pk)
    after_kept = _record(owner.pk, at=old)  # expired, but after a kept row: not a prefix

    with CaptureQueriesContext(connection) as queries:
        assert prune_changes(batch=10) == 25
    sql = [q["sql"] for q in queries.captured_queries]
    deletes = [s for s in sql if s.startswith("DELETE") and "content_change" in s]
    assert len(deletes) == 3  # 10 + 10 + 5, each in its own transaction
    assert not [s for s in sql if '"content_change"."action"' in s]  # no row loaded
    assert list(Change.objects.values_list("pk", flat=True)) == [kept.pk, after_kept.pk]
    last = expired[-1]
    assert pruned_through() == Position(int(last.xid), int(last.pk))
    assert prune_changes(batch=10) == 0
