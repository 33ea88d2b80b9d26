"""Tasks the queue tests run: they record each run so a test can count them."""

from __future__ import annotations

import os
import time
from pathlib import Path

from django_tasks import task

from tiddly.tasks import enqueue


@task()
def record(path: str, label: str) -> None:
    """Append ``label`` to the file at ``path`` (one line per run)."""
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"{label}\n")


@task()
def chain(path: str, left: int) -> None:
    """Record, then queue the next link until ``left`` is 0."""
    record.call(path, f"link {left}")
    if left:
        enqueue(chain, path, left - 1)


@task()
def hang_once(path: str) -> None:
    """The first run records 'started' and hangs (its worker is then killed); later runs record
    'finished'."""
    marker = Path(path)
    if not marker.exists():
        marker.write_text("started\n")
        while True:  # bounded by the test, which kills this process
            time.sleep(0.1)
    with marker.open("a") as out:
        out.write(f"finished {os.getpid()}\n")


@task()
def slow(path: str, label: str, seconds: float) -> None:
    """Record 'start label pid', sleep, record 'end label': a long task a test can count."""
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"start {label} {os.getpid()}\n")
    time.sleep(seconds)
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"end {label}\n")
