"""Task workers (SPEC §15): the loop, its lanes, and the one the web server starts as a child.

- ``work(stop)``: the loop of one worker process. Its main thread runs the ``default`` queue
  (captures, indexing, retention), re-queues tasks of dead workers, queues periodic tasks and
  calls the pollers; ``TIDDLY_WEBHOOK_WORKERS`` threads run the webhook lane (one queue per
  owner, taken in turn). So a receiver that never answers holds only delivery threads, and one
  owner's thousand deliveries wait behind other owners' turns, not the other way round.
  Setting ``stop`` lets every thread finish the task it runs and then end.
- ``EmbeddedWorker``: the web server's worker (``make run``): a child process
  (``manage.py worker --parent PID``) started and stopped by the ASGI lifespan, so extraction
  and embedding never run in the interpreter that answers requests, and at a CPU priority 10
  lower from its first instruction. Stopping it sends SIGTERM, waits
  ``TIDDLY_WORKER_STOP_SECONDS`` for the current tasks, then kills it and gives its tasks back
  to the queue at once (no lease wait).
  Several web processes start one child each; they share the queue like any workers.
  The server answers once the child has set Django up (``wait_ready``, at most
  ``TIDDLY_WORKER_READY_SECONDS``): that start-up is a second of CPU, which the server's first
  requests would otherwise share (on two cores they ran a quarter slower while it lasted).
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections, connections
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from tiddly.tasks import (
    QUEUE,
    WEBHOOKS,
    lease,
    poll,
    queue_periodic,
    release,
    requeue_interrupted,
    run_ready,
)

logger = logging.getLogger(__name__)


def work(stop: threading.Event, *, interval: float = 1.0, check_every: float = 30.0) -> None:
    """A worker's life: run what is ready, wait ``interval``, again, until ``stop`` is set;
    re-queue interrupted tasks every ``check_every`` seconds (at most half the lease); queue
    periodic tasks when they are due. Webhook deliveries run in their own threads."""
    lanes = [
        threading.Thread(target=_lane, args=(stop, WEBHOOKS, interval), name=f"tiddly-lane-{n}")
        for n in range(settings.TIDDLY_WEBHOOK_WORKERS)
    ]
    for thread in lanes:
        thread.start()
    check_every = min(check_every, lease() / 2)
    next_check = 0.0
    next_due: dict[str, float] = {}
    try:
        while not stop.is_set():
            try:
                if time.monotonic() >= next_check:
                    requeue_interrupted()
                    next_check = time.monotonic() + check_every
                queue_periodic(next_due)
                poll()
                run_ready(stop=stop, queue=QUEUE, poll_every=interval)
                if not lanes:  # TIDDLY_WEBHOOK_WORKERS = 0: deliveries take their turn here
                    run_ready(stop=stop, queue=None, lane=WEBHOOKS)
            except Exception:  # a broken database connection must not end the worker
                logger.exception("Task worker loop failed; retrying")
            finally:
                close_old_connections()
            stop.wait(interval)
    finally:
        stop.set()
        for thread in lanes:
            thread.join()


def _lane(stop: threading.Event, lane: str, interval: float) -> None:
    try:
        while not stop.is_set():
            try:
                run_ready(stop=stop, queue=None, lane=lane)
            except Exception:
                logger.exception("Task lane %s failed; retrying", lane)
            finally:
                close_old_connections()
            stop.wait(interval)
    finally:
        connections.close_all()


# How much lower the embedded worker's CPU priority is than the web process's.
NICE = 10


class EmbeddedWorker:
    """The web server's own worker: a child process (see the module's docstring)."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[bytes] | None = None
        self._ready: int | None = None  # the read end of the child's ready pipe

    def start(self) -> None:
        if self._child is not None or not settings.TIDDLY_EMBEDDED_WORKER:
            return
        ready, told = os.pipe()
        # `make run` ran the system checks (migrate); the child's would be half its start-up.
        command = [sys.executable, "-m", "django", "worker", "--parent", str(os.getpid())]
        command += ["--ready-fd", str(told), "--skip-checks"]
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ["DJANGO_SETTINGS_MODULE"]}
        try:
            self._child = subprocess.Popen(
                command, cwd=Path(settings.BASE_DIR), env=env, pass_fds=(told,)
            )
        except BaseException:
            os.close(ready)
            raise
        finally:
            os.close(told)  # the child's copy alone: its exit reads as the end of the pipe
        self._ready = ready
        # Lowered at once, not by the child's own --nice once Django is set up: its start-up
        # would otherwise compete with the server's first requests at full priority.
        with contextlib.suppress(OSError):
            os.setpriority(
                os.PRIO_PROCESS, self._child.pid, os.getpriority(os.PRIO_PROCESS, 0) + NICE
            )

    def wait_ready(self, timeout: float) -> bool:
        """Wait until the child says it is set up, it ends, or ``timeout`` seconds pass; whether
        it said so. Called once, after ``start``."""
        ready, self._ready = self._ready, None
        if ready is None:
            return False
        try:
            readable, _, _ = select.select([ready], [], [], timeout)
            said = os.read(ready, 1) if readable else None
        finally:
            os.close(ready)
        if said == b"":
            logger.warning("Task worker %s ended before it was set up", self.pid)
        elif said is None:
            logger.warning("Task worker %s was not set up within %s s", self.pid, timeout)
        return said == b"1"

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def stop(self, timeout: float | None = None) -> None:
        if self._ready is not None:
            os.close(self._ready)
            self._ready = None
        child, self._child = self._child, None
        if child is None:
            return
        grace = settings.TIDDLY_WORKER_STOP_SECONDS if timeout is None else timeout
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(grace)
            except subprocess.TimeoutExpired:
                logger.warning("Task worker %d did not stop within %s s: killed", child.pid, grace)
                child.kill()
                child.wait()
        released = release_tasks_of(child.pid)
        if released:
            logger.warning("Gave back %d task(s) of the stopped worker %d", released, child.pid)
        connections.close_all()


def release_tasks_of(pid: int) -> int:
    """Queue again, at once, the tasks a worker process that is gone still held."""
    prefix = f"tiddly-{pid}-"
    running = DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING)
    count = 0
    for row_id, worker_ids in running.values_list("pk", "worker_ids"):
        if worker_ids and str(worker_ids[-1]).startswith(prefix):
            count += release(row_id, worker_ids[-1])
    return count


embedded_worker = EmbeddedWorker()

__all__ = ["EmbeddedWorker", "embedded_worker", "release_tasks_of", "work"]
