"""The SQLite backend keeps a closed connection for the next request (tiddly/sqlite)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from django.db.utils import ConnectionHandler

from tiddly import settings as tiddly_settings
from tiddly.sqlite import base


@pytest.fixture
def handler_for(tmp_path: Path, django_db_blocker):  # type: ignore[no-untyped-def]
    """Connections to a SQLite file of the test's own, whatever database the suite runs on."""
    made: list[ConnectionHandler] = []

    def make(name: str = "pool.sqlite3") -> ConnectionHandler:
        handler = ConnectionHandler(
            {
                "default": {
                    "ENGINE": tiddly_settings.SQLITE_ENGINE,
                    "NAME": str(tmp_path / name),
                    "OPTIONS": tiddly_settings._sqlite_options(),
                }
            }
        )
        made.append(handler)
        return handler

    with django_db_blocker.unblock():
        yield make
    for handler in made:
        handler.close_all()
    base.discard_idle()


def raw(handler: ConnectionHandler):  # type: ignore[no-untyped-def]
    wrapper = handler["default"]
    wrapper.ensure_connection()
    return wrapper.connection


def in_thread(fn):  # type: ignore[no-untyped-def]
    """``fn()`` in a new thread, as Django's ASGI handler runs each request."""
    out = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join()
    return out[0]


def test_the_next_request_reuses_a_closed_connection_and_sees_committed_rows(handler_for) -> None:
    handler = handler_for()
    first = handler["default"]
    with first.cursor() as cursor:
        cursor.execute("CREATE TABLE t (x integer)")
        cursor.execute("INSERT INTO t VALUES (1)")
    kept = first.connection
    first.close()

    def next_request():  # type: ignore[no-untyped-def]
        wrapper = handler["default"]  # a new thread: a new wrapper, as in a request
        with wrapper.cursor() as cursor:
            cursor.execute("SELECT x FROM t")
            rows = cursor.fetchall()
        conn = wrapper.connection
        wrapper.close()
        return conn, rows

    conn, rows = in_thread(next_request)
    assert conn is kept
    assert rows == [(1,)]
    # Its settings are the ones a new connection gets.
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_a_connection_closed_inside_a_transaction_is_closed_and_its_writes_are_lost(
    handler_for,
) -> None:
    handler = handler_for()
    wrapper = handler["default"]
    with wrapper.cursor() as cursor:
        cursor.execute("CREATE TABLE t (x integer)")
        cursor.execute("BEGIN IMMEDIATE")
        cursor.execute("INSERT INTO t VALUES (1)")
    left_open = wrapper.connection
    assert left_open.in_transaction
    wrapper.close()

    def next_request():  # type: ignore[no-untyped-def]
        conn = raw(handler)
        rows = conn.execute("SELECT x FROM t").fetchall()
        handler["default"].close()
        return conn, rows

    conn, rows = in_thread(next_request)
    assert conn is not left_open
    assert rows == []


def test_two_requests_at_once_never_share_a_connection(handler_for) -> None:
    handler = handler_for()
    one = raw(handler)
    other = in_thread(lambda: raw(handler))
    assert one is not other


def test_the_pool_is_bounded_and_per_database_file(handler_for, settings) -> None:
    settings.TIDDLY_SQLITE_POOL = 2
    handlers = [handler_for() for _ in range(4)]
    elsewhere = handler_for("other.sqlite3")
    for handler in handlers:
        raw(handler)
    raw(elsewhere)
    for handler in [*handlers, elsewhere]:
        handler["default"].close()
    names = {name: len(conns) for name, conns in base._idle.items()}
    assert sorted(names.values()) == [1, 2]
    reused = raw(handler_for("other.sqlite3"))
    assert reused.execute("PRAGMA database_list").fetchone()[2].endswith("other.sqlite3")


def test_pool_size_zero_closes_every_connection(handler_for, settings) -> None:
    settings.TIDDLY_SQLITE_POOL = 0
    handler = handler_for()
    first = raw(handler)
    handler["default"].close()
    assert base._idle == {}
    assert in_thread(lambda: raw(handler)) is not first


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_a_forked_child_starts_with_no_idle_connections(handler_for) -> None:
    handler = handler_for()
    raw(handler)
    handler["default"].close()
    assert base._idle
    pid = os.fork()
    if pid == 0:  # the child
        os._exit(0 if not base._idle else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert base._idle  # the parent's are still there


def test_one_connection_that_bound_a_large_value_is_kept_and_the_others_closed(
    handler_for,
) -> None:
    # SQLite keeps the values last bound to a prepared statement: each kept connection holds a
    # copy of the last multi-megabyte content it wrote.
    first, second = handler_for(), handler_for()
    with first["default"].cursor() as cursor:
        cursor.execute("CREATE TABLE t (x text)")
    wrote_large = []
    for handler in (first, second):
        wrapper = handler["default"]
        with wrapper.cursor() as cursor:
            cursor.execute("INSERT INTO t VALUES (%s)", ["x" * (base.LARGE_VALUE + 1)])
        wrote_large.append(wrapper.connection)
    for handler in (first, second):
        handler["default"].close()
    idle = [conn for conns in base._idle.values() for conn in conns]
    assert idle == [wrote_large[0]]
    assert in_thread(lambda: raw(first)) is wrote_large[0]
    conn = in_thread(lambda: raw(first))
    assert conn not in wrote_large
    assert conn.execute("SELECT count(*), max(length(x)) FROM t").fetchone() == (
        2,
        base.LARGE_VALUE + 1,
    )


def test_a_web_process_leaves_the_checkpoint_to_the_workers(
    handler_for, monkeypatch, tmp_path
) -> None:
    """The web server's connections let the log grow to WEB_CHECKPOINT_PAGES; the workers'
    poller (``checkpoint``) copies it into the database file."""
    monkeypatch.setattr(base, "_checkpoint_pages", None)
    plain = raw(handler_for("plain.sqlite3"))
    assert plain.execute("PRAGMA wal_autocheckpoint").fetchone() == (1000,)
    base.web_process()
    handler = handler_for("web.sqlite3")
    web = raw(handler)
    assert web.execute("PRAGMA wal_autocheckpoint").fetchone() == (base.WEB_CHECKPOINT_PAGES,)
    web.execute("CREATE TABLE t (v BLOB)")
    for _ in range(3):  # 6 MB: past SQLite's own 1 000 pages, within the web server's bound
        web.execute("INSERT INTO t VALUES (zeroblob(2000000))")
    file = tmp_path / "web.sqlite3"
    assert file.stat().st_size < 1_000_000  # still in the log
    base.checkpoint(handler["default"])
    assert file.stat().st_size > 6_000_000


def _wal_bytes(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_rewriting_a_long_value_logs_its_pages_once(handler_for, tmp_path: Path) -> None:
    # Debian's SQLite zeroes every page a write frees (secure_delete on): rewriting a 2 MB value
    # then logged 4 MB, its new pages and the old ones zeroed.
    handler = handler_for()
    conn = raw(handler)
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 2  # FAST
    conn.execute("CREATE TABLE t (id integer PRIMARY KEY, body text)")
    conn.execute("INSERT INTO t VALUES (1, ?)", ["a" * 2_000_000])
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = _wal_bytes(tmp_path / "pool.sqlite3")
    conn.execute("UPDATE t SET body = ? WHERE id = 1", ["b" * 2_000_000])
    conn.commit()
    logged = _wal_bytes(tmp_path / "pool.sqlite3") - before
    assert 2_000_000 < logged < 2_400_000


def test_erasing_zeroes_what_its_deletes_free_and_then_goes_back_to_fast(
    handler_for, tmp_path: Path
) -> None:
    handler = handler_for()
    wrapper = handler["default"]
    conn = raw(handler)
    conn.execute("CREATE TABLE t (id integer PRIMARY KEY, body text)")
    for n in (1, 2, 3):
        conn.execute("INSERT INTO t VALUES (?, ?)", [n, f"secret-{n} " * 50_000])
    conn.commit()
    with base.erasing(using=wrapper):
        assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
        conn.execute("DELETE FROM t WHERE id = 1")
        conn.commit()
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 2
    conn.execute("DELETE FROM t WHERE id = 2")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    stored = (tmp_path / "pool.sqlite3").read_bytes()
    assert stored.count(b"secret-1") == 0
    assert stored.count(b"secret-2") > 0  # freed without erasing: left until the page is reused
    assert stored.count(b"secret-3") >= 50_000  # kept


def test_erasing_goes_back_to_fast_when_its_body_fails(handler_for) -> None:
    handler = handler_for()
    with pytest.raises(RuntimeError), base.erasing(using=handler["default"]):
        raise RuntimeError("the delete failed")
    assert raw(handler).execute("PRAGMA secure_delete").fetchone()[0] == 2
