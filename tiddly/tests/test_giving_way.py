"""The web server's worker gives way to it while it is busy (tiddly/giving_way.py)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tiddly import giving_way

BURN = "import time\nend = time.time() + 30\nwhile time.time() < end: pass"
IDLE = "import time\ntime.sleep(30)"


@pytest.fixture
def process() -> Iterator:  # type: ignore[type-arg]
    started: list[subprocess.Popen[bytes]] = []

    def start(code: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, "-c", code])
        started.append(proc)
        return proc

    yield start
    giving_way.watch(None)
    for proc in started:
        proc.kill()
        proc.wait()


def _step(seconds: float) -> None:
    """A step of background work."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_a_worker_pauses_while_the_process_it_watches_is_busy(process, settings) -> None:
    settings.TIDDLY_WORKER_GIVE_WAY = 3
    busy = process(BURN)
    time.sleep(0.2)  # the burner is running
    giving_way.watch(busy.pid)
    _step(0.1)
    paused = giving_way.give_way()
    assert 0.25 <= paused <= giving_way.MAX_PAUSE  # three times the ~0.1 s step


def test_a_worker_does_not_pause_while_the_process_it_watches_is_idle(process, settings) -> None:
    settings.TIDDLY_WORKER_GIVE_WAY = 3
    idle = process(IDLE)
    giving_way.watch(idle.pid)
    _step(0.1)
    assert giving_way.give_way() == 0.0


def test_a_worker_watching_nobody_or_told_not_to_never_pauses(process, settings) -> None:
    busy = process(BURN)
    time.sleep(0.2)
    giving_way.watch(None)
    _step(0.05)
    assert giving_way.give_way() == 0.0
    settings.TIDDLY_WORKER_GIVE_WAY = 0
    giving_way.watch(busy.pid)
    _step(0.05)
    assert giving_way.give_way() == 0.0


def test_a_process_that_is_gone_stops_nothing(process, settings) -> None:
    settings.TIDDLY_WORKER_GIVE_WAY = 3
    gone = process(IDLE)
    giving_way.watch(gone.pid)
    gone.kill()
    gone.wait()
    _step(0.05)
    assert giving_way.give_way() == 0.0
