"""Turns for long edits on SQLite (issue 27).

SQLite lets one write run at a time, so of eight str-replaces of one 6 MB note only one writes;
the other seven meanwhile each read the note, plan their edit and hold the copies (the content,
the new content, its encoding) only to find the note changed under them and do it all again
once their turn comes. Here an edit of an item whose content was long the last time this
process saw it waits for the one before it instead: the process then holds one such edit's
copies at a time and each edit reads and plans once. On PostgreSQL edits of different items
write in parallel, so nothing waits there.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

from django.db import connection

# A content this long (characters) makes its item's next edits take turns.
LONG_CHARS = 200_000
# An edit that waited this long goes ahead without its turn: a slow edit delays others, never
# fails them.
WAIT_SECONDS = 30.0
# Items remembered as long, least recently seen dropped first.
REMEMBERED = 256


class Turns:
    def __init__(self, *, wait: float = WAIT_SECONDS, remembered: int = REMEMBERED) -> None:
        self._gate = threading.Lock()
        self._long: OrderedDict[Hashable, None] = OrderedDict()
        self._lock = threading.Lock()
        self._wait = wait
        self._remembered = remembered

    def is_long(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._long

    @contextmanager
    def turn(self, key: Hashable) -> Iterator[Callable[[int], None]]:
        """Hold the turn while the body runs if ``key``'s content was long when last seen; the
        body reports the content's length it read (the yielded callable)."""
        # Inside a caller's transaction this thread may already hold SQLite's write lock, which
        # the edit holding the turn waits for: no turn then.
        held = (
            connection.vendor == "sqlite"
            and not connection.in_atomic_block
            and self.is_long(key)
            and self._gate.acquire(timeout=self._wait)
        )
        try:
            yield lambda length: self._seen(key, length)
        finally:
            if held:
                self._gate.release()

    def _seen(self, key: Hashable, length: int) -> None:
        with self._lock:
            if length < LONG_CHARS:
                self._long.pop(key, None)
                return
            self._long[key] = None
            self._long.move_to_end(key)
            while len(self._long) > self._remembered:
                self._long.popitem(last=False)


long_edits = Turns()
