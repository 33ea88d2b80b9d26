"""Background work that gives way to the web server it belongs to (issue 27).

The web server's own worker runs at a lower CPU priority, but on a machine of two cores a lower
priority does not keep it off the core the web process is not using, and a worker embedding
chunks beside a busy web process still slows its requests (shared caches and memory bandwidth;
bench/README.md has the figures). So heavy background work
(indexing) is cut into short steps, and between two steps ``give_way()`` looks at how much CPU
the web process used meanwhile: when it was busy, the worker pauses ``TIDDLY_WORKER_GIVE_WAY``
times as long as the step took (at most a second), so it takes about a quarter of a core while
requests run and all of one when they stop. A worker started on its own (``manage.py worker``)
watches nobody and never pauses.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from django.conf import settings

# A web process using this share of a core or more since the last step counts as busy.
BUSY_SHARE = 0.25
MAX_PAUSE = 1.0
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class _Watch:
    pid: int
    at: float
    cpu: float


_watch: _Watch | None = None


def watch(pid: int | None) -> None:
    """Give way to process ``pid`` from now on (None: to nobody)."""
    global _watch
    cpu = None if pid is None else cpu_seconds(pid)
    _watch = None if pid is None or cpu is None else _Watch(pid, time.monotonic(), cpu)


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) process ``pid`` has used, from /proc; None if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def give_way() -> float:
    """Between two steps of heavy work: pause if the watched process was busy since the last
    call. Returns the seconds paused."""
    watched = _watch
    ratio = settings.TIDDLY_WORKER_GIVE_WAY
    if watched is None or ratio <= 0:
        return 0.0
    now, cpu = time.monotonic(), cpu_seconds(watched.pid)
    if cpu is None:
        return 0.0
    step = now - watched.at
    paused = 0.0
    if step > 0 and (cpu - watched.cpu) / step >= BUSY_SHARE:
        paused = min(step * ratio, MAX_PAUSE)
        time.sleep(paused)
        now, cpu = time.monotonic(), cpu_seconds(watched.pid) or cpu
    watched.at, watched.cpu = now, cpu
    return paused
