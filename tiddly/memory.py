"""Keep the server's (and its workers') memory flat when they handle multi-megabyte items.

glibc raises its mmap threshold every time a large block is freed, so after the first 6 MB
request, later 6 MB buffers come from the heap and fragment it: the process keeps hundreds of
megabytes it no longer uses. Pinning the threshold (which also turns off that adjustment) makes
every large buffer an mmap that goes back to the OS when freed; capping arenas stops each request
thread from keeping its own heap. Values can be overridden with glibc's own MALLOC_* variables.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


def tune_malloc(threshold: int = 256 * 1024, arenas: int = 2) -> bool:
    """Apply the settings if this is glibc and the operator did not set them; True if applied."""
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
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
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        return bool(ctypes.CDLL(name).malloc_trim(0))
    except (OSError, AttributeError):
        return False
