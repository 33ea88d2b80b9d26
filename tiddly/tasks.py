"""The project's one way to run work later (SPEC §15): django-tasks with its database backend.

- A task is a function decorated with django-tasks' ``@task()`` in the service module of its
  subject (``content/services/capture.py``, …). It may run twice (a worker can die after the
  work and before the row says so), so it is idempotent and re-reads its row under a lock.
- ``enqueue`` queues it in the write's transaction (the queue is a table of the same database):
  the task commits with the write or not at all, and no worker sees it before the commit.
- Workers: ``work()`` is the loop — the library's worker in batch mode (claims one ready task at
  a time with ``SELECT … FOR UPDATE SKIP LOCKED`` on PostgreSQL, an exclusive transaction on
  SQLite, so every task runs once however many workers run) plus the re-queueing of tasks whose
  worker died. The web process runs one loop in a thread (``EmbeddedWorker``, started by the ASGI
  lifespan) unless ``TIDDLY_EMBEDDED_WORKER=0``; ``python manage.py worker`` runs more.
- Periodic work (retention pruning) is a task registered with ``register_periodic``: each worker
  loop queues it when it starts and then at most once per its interval setting, unless one is
  already waiting in the queue. Pollers (``register_poller``: the webhooks' dispatch from the
  change feed, the search index's check for marked items) are called on every loop, about once a
  second. Both are registered by an app when it starts (``content.apps.register_background_work``),
  never by importing a module: what a worker runs is listed in one place.
- Tests run due tasks in-process through the real backend with ``run_tasks()``.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks.base import Task
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction

logger = logging.getLogger(__name__)

BACKEND = "default"
QUEUE = "default"


def enqueue(task: Task[Any, Any], *args: Any, delay: float = 0, **kwargs: Any) -> None:
    """Queue ``task(*args, **kwargs)`` to run no sooner than ``delay`` seconds from now, in the
    current transaction (at once outside one): its queue row commits with the write that asked
    for it, so a rolled-back write queues nothing, a committed one cannot lose its task to a
    crash just after the commit, and no worker sees the row before the commit."""
    chosen = task.using(run_after=timezone.now() + timedelta(seconds=delay)) if delay else task
    chosen.enqueue(*args, **kwargs)


def requeue_interrupted(lease_seconds: float | None = None) -> int:
    """Put back tasks that have been RUNNING longer than the lease: their worker died (a crash,
    ``kill -9``, a lost machine) and no one else will finish them. Returns how many."""
    lease = settings.TIDDLY_TASK_LEASE_SECONDS if lease_seconds is None else lease_seconds
    stale = timezone.now() - timedelta(seconds=lease)
    count = DBTaskResult.objects.filter(
        status=TaskResultStatus.RUNNING, started_at__lt=stale
    ).update(status=TaskResultStatus.READY, started_at=None)
    if count:
        logger.warning("Re-queued %d interrupted task(s)", count)
    return count


def _worker(max_tasks: int | None = None) -> Worker:
    return Worker(
        queue_names=[QUEUE],
        interval=0,
        batch=True,
        backend_name=BACKEND,
        startup_delay=False,
        max_tasks=max_tasks,
        worker_id=f"tiddly-{uuid.uuid4().hex[:12]}",
        excluded_queue_names=[],
    )


def run_ready(max_tasks: int | None = None) -> int:
    """Run ready tasks one at a time until none is left (or ``max_tasks`` ran); how many ran.

    The library's own loop (``Worker.run``) would also close the database connection between
    tasks, which a caller inside a transaction (a test) cannot have; ``work()`` does that
    between rounds instead. Claiming and running are the library's.
    """
    worker = _worker(max_tasks)
    ran = 0
    while max_tasks is None or ran < max_tasks:
        ready = DBTaskResult.objects.ready().filter(backend_name=BACKEND, queue_name=QUEUE)
        with exclusive_transaction(ready.db):
            found = ready.get_locked()
            if found is not None:
                found.claim(worker.worker_id)  # no other worker will take it now
        if found is None:
            return ran
        worker.run_task(found)
        ran += 1
    return ran


@dataclass(frozen=True)
class Periodic:
    task: Task[[], Any]
    interval_setting: str  # seconds; 0 = never

    def interval(self) -> float:
        return float(getattr(settings, self.interval_setting))


_periodic: list[Periodic] = []


def prune_finished(*, now: Any = None) -> int:
    """Delete the records of tasks that finished (successfully or not) more than
    TIDDLY_TASK_RESULT_DAYS ago; how many. Queued and running tasks are never touched."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.TIDDLY_TASK_RESULT_DAYS)
    done = (TaskResultStatus.SUCCESSFUL, TaskResultStatus.FAILED)
    deleted, _ = DBTaskResult.objects.filter(status__in=done, finished_at__lt=cutoff).delete()
    return deleted


_pollers: list[Callable[[], Any]] = []


def register_poller(poller: Callable[[], Any]) -> None:
    """Have every worker loop call ``poller()`` before it runs what is ready (cheap when there
    is nothing to do: it runs about once a second in every worker); it may queue tasks."""
    if poller not in _pollers:
        _pollers.append(poller)


def pollers() -> list[Callable[[], Any]]:
    """The registered pollers, in registration order."""
    return list(_pollers)


def periodic_tasks() -> list[Task[[], Any]]:
    """The registered periodic tasks, in registration order."""
    return [p.task for p in _periodic]


def poll() -> None:
    """Call every poller; one that fails is logged and does not keep the others from running."""
    for poller in _pollers:
        try:
            poller()
        except Exception:
            logger.exception("Task poller %s failed", getattr(poller, "__qualname__", poller))


def is_queued(task: Task[Any, Any]) -> bool:
    """Whether a run of ``task`` is waiting (due or not) or running."""
    active = (TaskResultStatus.READY, TaskResultStatus.RUNNING)
    return DBTaskResult.objects.filter(task_path=task.module_path, status__in=active).exists()


def register_periodic(task: Task[[], Any], *, interval_setting: str) -> None:
    """Have every worker queue ``task()`` at its start and then once per the setting's seconds."""
    if all(p.task.module_path != task.module_path for p in _periodic):
        _periodic.append(Periodic(task, interval_setting))


def queue_periodic(next_due: dict[str, float], now: float | None = None) -> int:
    """Queue each periodic task that is due by ``next_due`` (a worker's own clock: task path →
    monotonic time; absent = due now) and not already queued or running. Returns how many."""
    now = time.monotonic() if now is None else now
    queued = 0
    for periodic in _periodic:
        path, interval = periodic.task.module_path, periodic.interval()
        if interval <= 0 or now < next_due.get(path, now):
            continue
        next_due[path] = now + interval
        if not is_queued(periodic.task):  # a backed-up queue gets one, not one per interval
            periodic.task.enqueue()
            queued += 1
    return queued


def work(stop: threading.Event, *, interval: float = 1.0, check_every: float = 30.0) -> None:
    """A worker's life: run what is ready, wait ``interval``, again, until ``stop`` is set;
    every ``check_every`` seconds re-queue interrupted tasks first; queue periodic tasks when
    they are due."""
    next_check = 0.0
    next_due: dict[str, float] = {}
    while not stop.is_set():
        try:
            now = timezone.now().timestamp()
            if now >= next_check:
                requeue_interrupted()
                next_check = now + check_every
            queue_periodic(next_due)
            poll()
            run_ready()
        except Exception:  # a broken database connection must not end the worker
            logger.exception("Task worker loop failed; retrying")
        finally:
            close_old_connections()
        stop.wait(interval)


class EmbeddedWorker:
    """One worker thread inside the web process (the default deployment: `make run` alone
    captures pages, indexes and delivers webhooks)."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None and settings.TIDDLY_EMBEDDED_WORKER:
            self._thread = threading.Thread(
                target=self._run, name="tiddly-task-worker", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        try:
            work(self._stop)
        finally:
            connections.close_all()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None


embedded_worker = EmbeddedWorker()


def run_tasks(*, due_within: float = 0, max_rounds: int = 50, max_tasks: int = 10_000) -> int:
    """Run every task that is due, in this process, through the real backend, until none is
    (tests). Each round calls the pollers first, as a worker loop does; a task may queue another.
    ``due_within`` also runs tasks delayed by at most that many seconds (a retry's backoff)
    without waiting for them. Returns how many ran."""
    ran = 0
    for _ in range(max_rounds):
        poll()
        if due_within:
            _bring_forward(due_within)
        before = DBTaskResult.objects.exclude(status=TaskResultStatus.READY).count()
        run_ready(max_tasks=max_tasks)
        done = DBTaskResult.objects.exclude(status=TaskResultStatus.READY).count() - before
        ran += done
        if not done:
            return ran
    raise RuntimeError("Tasks kept queueing tasks: stopped after max_rounds")


def _bring_forward(seconds: float) -> None:
    now = timezone.now()
    DBTaskResult.objects.filter(
        status=TaskResultStatus.READY,
        run_after__gt=now,
        run_after__lte=now + timedelta(seconds=seconds),
    ).update(run_after=now)


__all__ = [
    "EmbeddedWorker",
    "embedded_worker",
    "enqueue",
    "periodic_tasks",
    "pollers",
    "prune_finished",
    "queue_periodic",
    "register_periodic",
    "requeue_interrupted",
    "run_ready",
    "run_tasks",
    "work",
]
