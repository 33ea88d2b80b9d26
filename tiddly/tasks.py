"""The project's one way to run work later (SPEC §15): django-tasks with its database backend.

- A task is a function decorated with django-tasks' ``@task()`` in the service module of its
  subject (``content/services/capture.py``, …). It may run twice (a worker can die after the
  work and before the row says so), so it is idempotent and re-reads its row under a lock.
- ``enqueue`` queues it in the write's transaction (the queue is a table of the same database):
  the task commits with the write or not at all, and no worker sees it before the commit.
- Lanes: most tasks go to the ``default`` queue; webhook deliveries go to one queue per owner
  (``lane_queue(WEBHOOKS, owner)``), served by their own worker threads that take owners in
  turn — a dead receiver never delays captures or indexing, and one owner's backlog never holds
  another owner's deliveries behind it (``tiddly.workers``).
- A running task keeps its claim alive: a heartbeat thread renews ``started_at`` every third of
  ``TIDDLY_TASK_LEASE_SECONDS``, so only a task whose worker died is run again
  (``requeue_interrupted``); after ``TIDDLY_TASK_MAX_ATTEMPTS`` such deaths it is marked failed.
  ``exclusive(name)`` is a lease for work no two workers (or a command) may do at once.
- Workers (``tiddly.workers``): ``work()`` is the loop; ``python manage.py worker`` runs one, and
  the web server runs one as a child process (unless ``TIDDLY_EMBEDDED_WORKER=0``).
- Periodic work (retention pruning) is a task registered with ``register_periodic``: each worker
  loop queues it when it starts and then at most once per its interval setting, unless one is
  already waiting in the queue. Pollers (``register_poller``: the webhooks' dispatch from the
  change feed, the search index's check for marked items) are called on every loop, about once a
  second. Both are registered by an app when it starts (``content.apps.register_background_work``),
  never by importing a module: what a worker runs is listed in one place.
- Tests run due tasks in-process through the real backend with ``run_tasks()``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connections, transaction
from django.db.models import Q
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks.base import Task
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction

from tiddly.models import TaskLock

logger = logging.getLogger(__name__)

BACKEND = "default"
QUEUE = "default"
WEBHOOKS = "webhooks"  # a lane: its queues are "webhooks.<owner>"


def lane_queue(lane: str, owner_id: Any) -> str:
    """The queue of one owner's tasks in a lane (served in turn with the other owners')."""
    return f"{lane}.{owner_id}"


def enqueue(
    task: Task[Any, Any], *args: Any, delay: float = 0, queue: str = QUEUE, **kwargs: Any
) -> None:
    """Queue ``task(*args, **kwargs)`` to run no sooner than ``delay`` seconds from now, in the
    current transaction (at once outside one): its queue row commits with the write that asked
    for it, so a rolled-back write queues nothing, a committed one cannot lose its task to a
    crash just after the commit, and no worker sees the row before the commit."""
    options: dict[str, Any] = {}
    if delay:
        options["run_after"] = timezone.now() + timedelta(seconds=delay)
    if queue != task.queue_name:
        options["queue_name"] = queue
    (task.using(**options) if options else task).enqueue(*args, **kwargs)


# --- claims, heartbeats, deaths -------------------------------------------------------------------


class WorkerDied(Exception):
    """Recorded on a task whose worker died TIDDLY_TASK_MAX_ATTEMPTS times while running it."""


def lease() -> float:
    return float(settings.TIDDLY_TASK_LEASE_SECONDS)


_given_up: dict[str, Callable[..., Any]] = {}


def register_given_up(task: Task[..., Any], handler: Callable[..., Any]) -> None:
    """``handler(*args, **kwargs)``, with the task's own arguments, runs when the task is marked
    failed because its workers kept dying: what the task was to finish (a capture's status)
    ends with it instead of waiting forever. Registered when the app starts."""
    _given_up[task.module_path] = handler


def _run_given_up(rows: list[tuple[str, dict[str, Any], str]]) -> None:
    for task_path, args_kwargs, reason in rows:
        handler = _given_up.get(task_path)
        if handler is None:
            continue
        try:
            handler(*args_kwargs.get("args", []), **args_kwargs.get("kwargs", {}), reason=reason)
        except Exception:  # one handler's bug must not stop the sweep of the others
            logger.exception("Ending given-up task %s failed", task_path)


def requeue_interrupted(lease_seconds: float | None = None) -> int:
    """Put back tasks whose heartbeat stopped for longer than the lease: their worker died (a
    crash, ``kill -9``, a lost machine) and no one else will finish them. A task whose workers
    died ``TIDDLY_TASK_MAX_ATTEMPTS`` times (each claim of it ended that way) is marked failed
    instead, with the reason. Returns how many were queued again."""
    held = lease() if lease_seconds is None else lease_seconds
    stale = DBTaskResult.objects.filter(
        status=TaskResultStatus.RUNNING, started_at__lt=timezone.now() - timedelta(seconds=held)
    )
    requeued = 0
    given_up: list[tuple[str, dict[str, Any], str]] = []
    with exclusive_transaction(stale.db):
        for row in stale.select_for_update(skip_locked=True)[:1000]:
            deaths = len(row.worker_ids)
            if deaths >= settings.TIDDLY_TASK_MAX_ATTEMPTS:
                reason = (
                    f"Its worker died (killed, crashed or out of memory) {deaths} times while "
                    f"running it (TIDDLY_TASK_MAX_ATTEMPTS = "
                    f"{settings.TIDDLY_TASK_MAX_ATTEMPTS}); not tried again."
                )
                row.set_failed(WorkerDied(reason))
                given_up.append((row.task_path, row.args_kwargs, reason))
                logger.error(
                    "Task %s (%s) failed: its worker died %d times", row.pk, row.task_path, deaths
                )
                continue
            row.status, row.started_at = TaskResultStatus.READY, None
            row.save(update_fields=["status", "started_at"])
            requeued += 1
    _run_given_up(given_up)
    if requeued:
        logger.warning("Re-queued %d interrupted task(s)", requeued)
    return requeued


def release(row_id: Any, worker_id: str) -> bool:
    """Give back a task this worker claimed but will not finish (it is stopping): queued again at
    once, and not counted as a death."""
    with exclusive_transaction(DBTaskResult.objects.db):
        row = (
            DBTaskResult.objects.select_for_update()
            .filter(pk=row_id, status=TaskResultStatus.RUNNING)
            .first()
        )
        if row is None or not row.worker_ids or row.worker_ids[-1] != worker_id:
            return False
        row.status, row.started_at, row.worker_ids = (
            TaskResultStatus.READY,
            None,
            row.worker_ids[:-1],
        )
        row.save(update_fields=["status", "started_at", "worker_ids"])
    return True


class Beat:
    """A thread that calls ``renew()`` every ``every`` seconds until stopped (its own database
    connection, closed when it ends). The first call is one period in: short work never beats."""

    def __init__(self, renew: Callable[[], Any], every: float, name: str) -> None:
        self._renew, self._every, self._stop = renew, every, threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __enter__(self) -> Beat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self._every):
                try:
                    self._renew()
                except Exception:  # a missed beat is retried; the lease has two more
                    logger.exception("Heartbeat failed")
        finally:
            connections.close_all()


def heartbeat(row_id: Any, worker_id: str) -> Beat:
    """Keep a running task's claim alive (``started_at`` is its last beat while it runs)."""

    def renew() -> None:
        DBTaskResult.objects.filter(pk=row_id, status=TaskResultStatus.RUNNING).update(
            started_at=timezone.now()
        )

    return Beat(renew, lease() / 3, f"tiddly-heartbeat-{worker_id}")


@contextlib.contextmanager
def exclusive(name: str, *, wait: float = 0) -> Iterator[bool]:
    """Hold the lease ``name`` while the block runs (renewed every third of the task lease);
    yields False, running the block without it, when someone else holds it after ``wait``
    seconds of trying. A holder that died frees it once the task lease has passed."""
    holder = f"{uuid.uuid4().hex[:12]}"
    deadline = time.monotonic() + wait
    while not (got := _take(name, holder)) and time.monotonic() < deadline:
        time.sleep(min(1.0, max(0.05, lease() / 30)))
    if not got:
        yield False
        return
    try:
        with Beat(lambda: _take(name, holder), lease() / 3, f"tiddly-lease-{name}"):
            yield True
    finally:
        TaskLock.objects.filter(name=name, holder=holder).delete()


def is_held(name: str) -> bool:
    """Whether someone holds the lease ``name`` now."""
    return TaskLock.objects.filter(name=name, expires_at__gte=timezone.now()).exists()


def _take(name: str, holder: str) -> bool:
    now = timezone.now()
    until = now + timedelta(seconds=lease())
    mine_or_free = Q(holder=holder) | Q(expires_at__lt=now)
    with transaction.atomic():
        if TaskLock.objects.filter(mine_or_free, name=name).update(holder=holder, expires_at=until):
            return True
        if TaskLock.objects.filter(name=name).exists():
            return False
        try:
            with transaction.atomic():
                TaskLock.objects.create(name=name, holder=holder, expires_at=until)
        except IntegrityError:  # taken meanwhile
            return False
    return True


def worker_prefix() -> str:
    """Worker ids of this process start with it (a parent that kills its worker child releases
    that child's tasks by it)."""
    return f"tiddly-{os.getpid()}-"


def _worker(max_tasks: int | None = None) -> Worker:
    return Worker(
        queue_names=[QUEUE],
        interval=0,
        batch=True,
        backend_name=BACKEND,
        startup_delay=False,
        max_tasks=max_tasks,
        worker_id=f"{worker_prefix()}{uuid.uuid4().hex[:12]}",
        excluded_queue_names=[],
    )


def _claim(worker_id: str, queue: str | None, lane: str | None, turn: dict[str, str]) -> Any:
    """Claim one ready task: of ``queue``, of ``lane`` (its owners' queues in turn, after the one
    ``turn`` served last) or of any queue (both None)."""
    ready = DBTaskResult.objects.ready().filter(backend_name=BACKEND)
    with exclusive_transaction(ready.db):
        if queue is not None:
            ready = ready.filter(queue_name=queue)
        elif lane is not None:
            in_lane = ready.filter(queue_name__startswith=f"{lane}.")
            names = sorted(set(in_lane.values_list("queue_name", flat=True).distinct()))
            if not names:
                return None
            last = turn.get(lane, "")
            chosen = next((n for n in names if n > last), names[0])
            turn[lane] = chosen
            ready = ready.filter(queue_name=chosen)
        found = ready.get_locked()
        if found is not None:
            found.claim(worker_id)  # no other worker will take it now
    return found


def run_ready(
    max_tasks: int | None = None,
    *,
    stop: threading.Event | None = None,
    queue: str | None = QUEUE,
    lane: str | None = None,
    poll_every: float | None = None,
) -> int:
    """Run ready tasks one at a time until none is left, ``max_tasks`` ran or ``stop`` is set
    (checked before each claim: a stopping worker finishes its task, it does not drain the
    queue); how many ran. ``queue=None, lane=None``: every queue (tests). ``poll_every``: call
    the pollers before a claim when that many seconds passed since the last call (or since the
    start), so a long queue (50 captures) does not keep new writes from being indexed — the
    indexing then comes first, by its priority — nor webhooks from being dispatched.

    The library's own loop (``Worker.run``) would also close the database connection between
    tasks, which a caller inside a transaction (a test) cannot have; ``work()`` does that
    between rounds instead. Claiming and running are the library's; the heartbeat is ours.
    """
    worker = _worker(max_tasks)
    turn: dict[str, str] = {}
    ran = 0
    polled = time.monotonic()
    while (max_tasks is None or ran < max_tasks) and not (stop is not None and stop.is_set()):
        if poll_every is not None and time.monotonic() - polled >= poll_every:
            poll()
            polled = time.monotonic()
        found = _claim(worker.worker_id, queue, lane, turn)
        if found is None:
            return ran
        current.task = (found.pk, worker.worker_id)
        try:
            with heartbeat(found.pk, worker.worker_id):
                worker.run_task(found)
        finally:
            current.task = None
        ran += 1
    return ran


current = threading.local()  # (task row id, worker id) of the task this thread runs, if any


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
        run_ready(max_tasks=max_tasks, queue=None)
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
    "QUEUE",
    "WEBHOOKS",
    "WorkerDied",
    "enqueue",
    "exclusive",
    "is_held",
    "lane_queue",
    "periodic_tasks",
    "pollers",
    "prune_finished",
    "queue_periodic",
    "register_periodic",
    "release",
    "requeue_interrupted",
    "run_ready",
    "run_tasks",
]
