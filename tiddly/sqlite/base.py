"""Django's SQLite backend with its connections kept for the next request.

Django's ASGI handler runs each request's sync code in a thread of its own, so the connection a
request opened is closed when it ends and ``CONN_MAX_AGE`` cannot keep it. Opening one costs
more than many requests' own queries: the PRAGMAs, the functions Django registers, and parsing
the whole schema (the full-text tables and their triggers) at the first statement. Here a
closed connection that holds no transaction goes back to a small pool shared by the process's
threads, keyed by the database file, and the next ``connect()`` takes it from there. Django's
own pool exists for PostgreSQL only.

The web server leaves checkpointing the write-ahead log to the task workers (``web_process``):
its connections checkpoint only once the log holds ``WEB_CHECKPOINT_PAGES``, a bound for when no
worker runs.

``TIDDLY_SQLITE_POOL`` (default 8) is how many idle connections a process keeps per database
file; 0 closes every connection as Django does. In-memory databases are never pooled (closing
one is already a no-op). A forked child starts with an empty pool: a SQLite connection must
not cross processes."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.backends.sqlite3 import base as sqlite_base


class _Connection(sqlite3.Connection):
    bound_large = False  # see LARGE_VALUE


_lock = threading.Lock()
_idle: dict[str, list[_Connection]] = {}


def discard_idle() -> None:
    """Close every idle connection (tests whose database files go away)."""
    with _lock:
        conns = [conn for idle in _idle.values() for conn in idle]
        _idle.clear()
    for conn in conns:
        with contextlib.suppress(sqlite3.Error):
            conn.close()


def _forget_after_fork() -> None:
    # The parent's connections (and the lock's state) are not the child's to use or close.
    global _lock
    _lock = threading.Lock()
    _idle.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


# Pages (4 KiB) the log may hold before a web server's connection checkpoints it itself; SQLite's
# default is 1 000, which a long note's create passes on its own.
WEB_CHECKPOINT_PAGES = 16_384
_checkpoint_pages: int | None = None  # None: SQLite's default


def web_process() -> None:
    """This process serves requests: its new connections leave the checkpoints to the workers."""
    global _checkpoint_pages
    _checkpoint_pages = WEB_CHECKPOINT_PAGES


def checkpoint(using: Any = connection) -> None:
    """Copy what the log holds into the database file, without waiting for anyone (PASSIVE)."""
    if using.vendor == "sqlite" and not using.is_in_memory_db():
        with using.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")


@contextlib.contextmanager
def erasing(using: Any = connection) -> Iterator[None]:
    """Inside: pages the writes free are zeroed (``secure_delete`` on): a permanent delete's.
    Every other write runs with FAST (settings): rewriting a long content then logs its pages
    once, not twice. Set on the driver's connection, which Django would refuse inside a
    transaction that failed."""
    if using.vendor != "sqlite":
        yield
        return
    using.ensure_connection()
    using.connection.execute("PRAGMA secure_delete = ON")
    try:
        yield
    finally:
        if using.connection is not None:
            using.connection.execute("PRAGMA secure_delete = FAST")


# Of the connections that bound a value this large, one at a time is kept: Python's sqlite3 keeps
# its prepared statements, and SQLite the values last bound to them, so each kept one holds a
# copy of the last multi-megabyte content it wrote for as long as it is idle.
LARGE_VALUE = 256 * 1024


class _Cursor(sqlite_base.SQLiteCursorWrapper):
    connection: _Connection  # made by the factory below

    def execute(self, query: str, params: Any = None) -> Any:
        if params and _large(params.values() if isinstance(params, Mapping) else params):
            self.connection.bound_large = True
        return super().execute(query, params)

    def executemany(self, query: str, param_list: Any) -> Any:
        self.connection.bound_large = True  # its rows may be a generator: not scanned
        return super().executemany(query, param_list)


def _large(values: Iterable[Any]) -> bool:
    return any(isinstance(v, str | bytes) and len(v) > LARGE_VALUE for v in values)


class DatabaseWrapper(sqlite_base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        params["factory"] = _Connection
        return params

    def create_cursor(self, name: str | None = None) -> Any:
        return self.connection.cursor(factory=_Cursor)

    def _pool_key(self) -> str | None:
        if self.is_in_memory_db() or settings.TIDDLY_SQLITE_POOL == 0:
            return None
        return str(self.settings_dict["NAME"])

    def get_new_connection(self, conn_params: dict[str, Any]) -> _Connection:
        key = self._pool_key()
        if key is not None:
            with _lock:
                idle = _idle.get(key)
                conn = idle.pop() if idle else None
            if conn is not None:
                # A migration or fixture load may have switched it off and failed before it
                # switched it back on.
                conn.execute("PRAGMA foreign_keys = ON")
                return conn
        conn = super().get_new_connection(conn_params)
        if _checkpoint_pages is not None:
            conn.execute(f"PRAGMA wal_autocheckpoint = {_checkpoint_pages}")
        return conn

    def _close(self) -> None:
        conn = self.connection
        key = self._pool_key()
        if (
            conn is not None
            and key is not None
            and not self.in_atomic_block
            and not conn.in_transaction
        ):
            with _lock:
                idle = _idle.setdefault(key, [])
                # One such connection is kept, warm for the next edit of a long note.
                if len(idle) < settings.TIDDLY_SQLITE_POOL and not (
                    conn.bound_large and any(c.bound_large for c in idle)
                ):
                    idle.append(conn)
                    return
        super()._close()  # type: ignore[misc]  # missing from django-stubs
