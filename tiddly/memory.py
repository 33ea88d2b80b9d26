"""Keep the server's (and its workers') memory flat when they handle multi-megabyte items.

glibc raises its mmap threshold every time a large block is freed, so after the first 6 MB
request, later 6 MB buffers come from the heap and fragment it: the process keeps hundreds of
megabytes it no longer uses. Pinning the threshold (which also turns off that adjustment) and
capping arenas (so each request thread does not keep its own heap) stops that.

Low (the task worker; the web process on PostgreSQL): every large buffer is an mmap that goes
back to the OS when freed. High (the web process on SQLite, ``web_threshold``), with the heap's
free pages handed back after a request instead (``give_back_heap``): SQLite builds a large
content's buffers in the process for every read and write (its records, the old value its
triggers read), so an edit of a 6 MB note makes a dozen 6 MB buffers, and as mmaps each one's
pages were faulted in and zeroed afresh (~40 ms of CPU per edit), where from the heap they reuse
the pages the last one freed. On PostgreSQL the low threshold measured faster and smaller
(bench/README.md, the seventh session). glibc's own MALLOC_* variables override both.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import os
import threading
import time
from typing import Any

M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
MMAP_THRESHOLD = 256 * 1024
# The largest threshold glibc itself would move to (DEFAULT_MMAP_THRESHOLD_MAX on 64 bits).
HEAP_THRESHOLD = 32 * 1024 * 1024


def web_threshold(database_engine: str) -> int:
    """The web process's mmap threshold for its database (see the module's docstring)."""
    return HEAP_THRESHOLD if "sqlite" in database_engine else MMAP_THRESHOLD


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def tune_malloc(threshold: int = MMAP_THRESHOLD, arenas: int = 2) -> bool:
    """Apply the settings if this is glibc and the operator did not set them; True if applied."""
    libc = _libc()
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    applied = False
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        applied = bool(mallopt(M_MMAP_THRESHOLD, threshold)) or applied
    if "MALLOC_ARENA_MAX" not in os.environ:
        applied = bool(mallopt(M_ARENA_MAX, arenas)) or applied
    return applied


def release_memory() -> bool:
    """Hand the heap's free pages back to the OS (glibc ``malloc_trim``); True if it could.

    After a large piece of work (indexing a 100 000-line note) freed its objects, glibc keeps the
    freed heap; a long-lived worker otherwise stays at its largest size until the next one."""
    trim = getattr(_libc(), "malloc_trim", None)
    return bool(trim(0)) if trim is not None else False


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


@functools.cache
def _mallinfo2() -> Any:
    fn = getattr(_libc(), "mallinfo2", None)  # glibc 2.33+
    if fn is not None:
        fn.restype = _MallInfo2
        fn.argtypes = []
    return fn


def free_heap_bytes() -> int | None:
    """Bytes the heap holds free (None: not glibc 2.33+). Half a microsecond."""
    fn = _mallinfo2()
    return None if fn is None else int(fn().fordblks)


# The heap's free bytes just after the last release (or the least seen since): glibc still counts
# the pages it handed back as free.
_free_after_release = 0
# When the last release was (monotonic seconds).
_released_at = -math.inf
_monotonic = time.monotonic  # the clock tests replace


def give_back_heap(limit: int, *, only_new: bool = False, every: float = 0.0) -> bool:
    """``release_memory`` when the heap holds more than ``limit`` bytes free; True if it did.

    Free bytes beyond what was free after the last release are released whenever they pass
    ``limit``. Counted from zero (not ``only_new``), they are also released, at most every
    ``every`` seconds: the heap's free bytes are then mostly pages already handed back, and
    released again they are faulted back in by the next request. ``only_new`` (after a small
    request): only the new ones count."""
    global _free_after_release, _released_at
    free = free_heap_bytes()
    if free is None:
        return False
    now = _monotonic()
    if free <= _free_after_release + limit and (
        only_new or free <= limit or now - _released_at < every
    ):
        _free_after_release = min(_free_after_release, free)
        return False
    released = release_memory()
    _free_after_release = free_heap_bytes() or 0
    _released_at = now
    return released


# Whether the request this thread serves read a long content (tiddly.middleware lets later reads
# of the same path take turns); a content this long (characters) counts.
LONG_READ_CHARS = 1_000_000
_reads = threading.local()


def note_read(content: str | None) -> None:
    """Called by the queries that fetch a whole content."""
    if content is not None and len(content) >= LONG_READ_CHARS:
        _reads.long = True


def took_long_read() -> bool:
    """Whether this thread's request read a long content since the last call (which clears it)."""
    long = getattr(_reads, "long", False)
    _reads.long = False
    return long
