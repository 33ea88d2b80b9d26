"""``python manage.py worker``: a task worker process (SPEC §15), as many as you like."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from tiddly import giving_way
from tiddly.memory import tune_malloc
from tiddly.tasks import requeue_interrupted, run_ready
from tiddly.workers import work


class Command(BaseCommand):
    help = (
        "Run queued background tasks (page capture, search indexing, webhook deliveries) until "
        "stopped (SIGTERM/SIGINT finish the current task, then stop; what is still queued waits "
        "for the next worker). Run any number, on any machine sharing the PostgreSQL database: "
        "each task runs once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--interval", type=float, default=1.0, help="Seconds to wait when nothing is ready."
        )
        parser.add_argument("--once", action="store_true", help="Run what is ready now, then exit.")
        parser.add_argument(
            "--nice", type=int, default=0, help="Lower this process's CPU priority by so much."
        )
        parser.add_argument(
            "--parent", type=int, help="Stop when this process is gone (the web server's child)."
        )
        parser.add_argument(
            "--ready-fd",
            type=int,
            help="Write '1' to this file descriptor once set up, then close it (the web server "
            "waits for it).",
        )

    def handle(
        self,
        *args: Any,
        interval: float,
        once: bool,
        nice: int,
        parent: int | None,
        ready_fd: int | None,
        **options: Any,
    ) -> None:
        if nice:
            os.nice(nice)
        # The web process does this in tiddly.asgi; a worker cuts and embeds 6 MB notes too
        # (indexing three 100 000-line notes: 255 -> 206 MB resident after).
        tune_malloc()
        if once:
            requeue_interrupted()
            run_ready(queue=None)
            return
        stop = threading.Event()

        def finish(signum: int, frame: FrameType | None) -> None:
            self.stderr.write(f"{signal.strsignal(signum)}: stopping after the current task.")
            stop.set()

        signal.signal(signal.SIGTERM, finish)
        signal.signal(signal.SIGINT, finish)
        if parent is not None:
            giving_way.watch(parent)  # the web server this worker belongs to
            threading.Thread(target=_orphaned, args=(parent, stop), daemon=True).start()
        self.stdout.write("Task worker running (Ctrl-C to stop).")
        if ready_fd is not None:
            with contextlib.suppress(OSError):  # a parent gone meanwhile is _orphaned's to see
                os.write(ready_fd, b"1")
            with contextlib.suppress(OSError):
                os.close(ready_fd)
        work(stop, interval=interval)


def _orphaned(parent: int, stop: threading.Event) -> None:
    """Stop (after the current task) once the parent is gone: a web server killed outright
    leaves no worker behind."""
    while not stop.wait(1.0):
        if os.getppid() != parent:
            stop.set()
