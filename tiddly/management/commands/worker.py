"""``python manage.py worker``: a task worker process (SPEC §15), as many as you like."""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from tiddly.tasks import requeue_interrupted, run_ready, work


class Command(BaseCommand):
    help = (
        "Run queued background tasks (page capture, search indexing, webhook deliveries) until "
        "stopped (SIGTERM/SIGINT finish the current task first). Run any number, on any "
        "machine sharing the PostgreSQL database: each task runs once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--interval", type=float, default=1.0, help="Seconds to wait when nothing is ready."
        )
        parser.add_argument("--once", action="store_true", help="Run what is ready now, then exit.")

    def handle(self, *args: Any, interval: float, once: bool, **options: Any) -> None:
        if once:
            requeue_interrupted()
            run_ready()
            return
        stop = threading.Event()

        def finish(signum: int, frame: FrameType | None) -> None:
            self.stderr.write(f"{signal.strsignal(signum)}: stopping after the current task.")
            stop.set()

        signal.signal(signal.SIGTERM, finish)
        signal.signal(signal.SIGINT, finish)
        self.stdout.write("Task worker running (Ctrl-C to stop).")
        work(stop, interval=interval)
