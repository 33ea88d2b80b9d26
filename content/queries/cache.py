"""A process-local cache of large item contents, so reading 50 lines of a 6 MB note doesn't
fetch 6 MB from the database every time.

Entries are keyed by (type, id, updated_at). Every content change goes through the services,
which always move ``updated_at`` (and hold the row lock while doing so), so a changed item simply
misses; nothing needs to be invalidated and every worker process can keep its own cache. Only
contents whose stored (compressed) size is at least ``TIDDLY_CONTENT_CACHE_MIN_BYTES`` are read
through it; it holds at most ``TIDDLY_CONTENT_CACHE_CHARS`` characters and evicts least-recently
used entries. A content changed behind the services' back (raw SQL) with the same ``updated_at``
would be served stale by a process that cached it — don't do that, or set the size to 0.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from django.conf import settings
from django.db import connection


class ContentCache:
    def __init__(self) -> None:
        self._entries: OrderedDict[Hashable, str] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> str | None:
        with self._lock:
            content = self._entries.get(key)
            if content is not None:
                self._entries.move_to_end(key)
            return content

    def put(self, key: Hashable, content: str) -> None:
        limit = settings.TIDDLY_CONTENT_CACHE_CHARS
        if len(content) > limit:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = content
            self._chars += len(content)
            while self._chars > limit:
                _, evicted = self._entries.popitem(last=False)
                self._chars -= len(evicted)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._chars = 0


contents = ContentCache()


def key(item: Any) -> tuple[str, Any, Any]:
    return (item.type_name, item.pk, item.updated_at)


def remember(item: Any) -> None:
    """Keep a just-written large content, so the next read or edit needn't fetch it. On
    PostgreSQL only: SQLite's reads never ask the cache (a large content costs it no network or
    decompression), so keeping one there only held up to ``TIDDLY_CONTENT_CACHE_CHARS`` of
    memory."""
    content = item.content
    if (
        connection.vendor == "postgresql"
        and settings.TIDDLY_CONTENT_CACHE_CHARS
        and content is not None
        and len(content) >= settings.TIDDLY_CONTENT_CACHE_MIN_BYTES
    ):
        contents.put(key(item), content)
