"""Tasks run once and stop cleanly (SPEC §15, round 4): heartbeats, SIGTERM, worker deaths, the
index lease, features that are off, and the web server's worker child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from content.models import Note
from content.models.search import SearchDirty
from content.search import indexing
from tiddly.models import TaskLock
from tiddly.tasks import is_queued, requeue_interrupted
from tiddly.tests.tasks_support import hang_once, record, slow
from tiddly.workers import EmbeddedWorker

ROOT = Path(__file__).resolve().parents[2]
postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="other processes cannot see SQLite's in-memory test database",
)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _env(**extra: str) -> dict[str, str]:
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "tiddly.settings",
        "TIDDLY_EMBEDDINGS": "off",
        **extra,
    }


def _worker(**extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "manage.py", "worker", "--interval", "0.2"], cwd=ROOT, env=_env(**extra)
    )


def _wait(condition: Any, seconds: float = 60) -> bool:
    """Synchronisation with a bound (not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _stop(*workers: subprocess.Popen[bytes]) -> None:
    for worker in workers:
        if worker.poll() is None:
            worker.kill()
        worker.wait(30)


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_killed_workers_task_runs_again_once_within_the_lease(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    result = hang_once.enqueue(str(marker))
    first = _worker(TIDDLY_TASK_LEASE_SECONDS="2")
    try:
        assert _wait(marker.exists)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(30)
    second = _worker(TIDDLY_TASK_LEASE_SECONDS="2")
    try:
        assert _wait(lambda: len(lines(marker)) >= 2)
        time.sleep(3)  # more than a lease: nothing runs it a third time
    finally:
        _stop(second)
    assert [line.split()[0] for line in lines(marker)] == ["started", "finished"]
    row = DBTaskResult.objects.get(pk=result.id)
    assert row.status == TaskResultStatus.SUCCESSFUL
    assert len(row.worker_ids) == 2


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_task_longer_than_the_lease_runs_exactly_once(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    result = slow.enqueue(str(out), "long", 20.0)
    workers = [_worker(TIDDLY_TASK_LEASE_SECONDS="2")]
    try:
        assert _wait(lambda: bool(lines(out)))
        time.sleep(3)  # past the lease: a second worker starting now checks for dead ones
        workers.append(_worker(TIDDLY_TASK_LEASE_SECONDS="2"))
        assert _wait(lambda: "end long" in lines(out))
        time.sleep(1)
    finally:
        _stop(*workers)
    assert [line.split()[:2] for line in lines(out)] == [["start", "long"], ["end", "long"]]
    row = DBTaskResult.objects.get(pk=result.id)
    assert row.status == TaskResultStatus.SUCCESSFUL
    assert len(row.worker_ids) == 1


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_sigterm_finishes_the_current_task_and_stops_without_draining(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    current = slow.enqueue(str(out), "current", 2.0)
    queued = [record.enqueue(str(out), f"queued {n}").id for n in range(5)]
    worker = _worker()
    try:
        assert _wait(lambda: bool(lines(out)))
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(60) == 0
    finally:
        _stop(worker)
    assert lines(out)[1:] == ["end current"]
    assert DBTaskResult.objects.get(pk=current.id).status == TaskResultStatus.SUCCESSFUL
    statuses = set(DBTaskResult.objects.filter(pk__in=queued).values_list("status", flat=True))
    assert statuses == {TaskResultStatus.READY}


@pytest.mark.django_db
def test_a_task_whose_worker_died_three_times_is_failed_with_the_reason(
    tmp_path: Path, settings: Any
) -> None:
    assert settings.TIDDLY_TASK_MAX_ATTEMPTS == 3
    stale = timezone.now() - timedelta(seconds=settings.TIDDLY_TASK_LEASE_SECONDS + 1)
    dying = record.enqueue(str(tmp_path / "x"), "crashes its worker")
    twice = record.enqueue(str(tmp_path / "y"), "died twice so far")
    DBTaskResult.objects.filter(pk=dying.id).update(
        status=TaskResultStatus.RUNNING, started_at=stale, worker_ids=["w1", "w2", "w3"]
    )
    DBTaskResult.objects.filter(pk=twice.id).update(
        status=TaskResultStatus.RUNNING, started_at=stale, worker_ids=["w1", "w2"]
    )

    assert requeue_interrupted() == 1

    failed = DBTaskResult.objects.get(pk=dying.id)
    assert failed.status == TaskResultStatus.FAILED
    assert failed.exception_class_path == "tiddly.tasks.WorkerDied"
    assert "died (killed, crashed or out of memory) 3 times" in failed.traceback
    assert failed.finished_at is not None
    assert DBTaskResult.objects.get(pk=twice.id).status == TaskResultStatus.READY


@pytest.mark.django_db
def test_nothing_is_queued_for_indexing_while_it_is_off(
    owner: Any, settings: Any, run_tasks: Any
) -> None:
    settings.TIDDLY_EMBEDDINGS = "off"
    Note.objects.create(owner=owner, title="marked", content="words")
    indexing.mark_all(owner_id=owner.pk)
    assert SearchDirty.objects.exists()
    indexing.schedule()  # one queued while it was on

    run_tasks()
    run_tasks(due_within=3600)

    assert not is_queued(indexing.index_task)
    assert SearchDirty.objects.exists()  # kept for when it is on again


@pytest.mark.django_db
def test_workers_do_not_index_while_reindex_holds_the_index(
    owner: Any, settings: Any, run_tasks: Any
) -> None:
    note = Note.objects.create(owner=owner, title="marked", content="words")
    indexing.mark_all(owner_id=owner.pk)
    held = TaskLock.objects.create(
        name=indexing.INDEX_LEASE,
        holder="reindex-elsewhere",
        expires_at=timezone.now() + timedelta(seconds=60),
    )
    indexing.schedule()

    run_tasks()

    assert SearchDirty.objects.filter(item_id=note.pk).exists()  # the task left it alone
    assert not is_queued(indexing.index_task)  # and the poller queues none meanwhile
    held.delete()
    call_command("reindex", "--no-progress", stdout=open(os.devnull, "w"))  # noqa: SIM115
    assert not SearchDirty.objects.exists()
    assert not TaskLock.objects.exists()


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_the_web_servers_worker_is_a_lower_priority_child_that_gives_back_its_task(
    tmp_path: Path, settings: Any, monkeypatch: Any
) -> None:
    for key, value in _env(TIDDLY_TASK_LEASE_SECONDS="300").items():
        monkeypatch.setenv(key, value)
    settings.TIDDLY_EMBEDDED_WORKER = True
    out = tmp_path / "runs"
    quick = record.enqueue(str(out), "quick")
    worker = EmbeddedWorker()
    worker.start()
    try:
        child = worker.pid
        assert child is not None
        assert worker.wait_ready(60)  # the server answers once this is true
        assert worker.wait_ready(60) is False  # told once: the pipe is gone
        assert worker.pid == child
        # 10 lower than the server, or the lowest there is (19) when the server is niced itself,
        # from the start: not only once the child has set Django up (a second or more of CPU).
        wanted = min(os.getpriority(os.PRIO_PROCESS, 0) + 10, 19)
        assert os.getpriority(os.PRIO_PROCESS, child) >= wanted
        assert child != os.getpid()
        assert _wait(lambda: lines(out) == ["quick"])
        assert os.getpriority(os.PRIO_PROCESS, child) >= wanted
        hung = slow.enqueue(str(out), "hung", 600.0)
        assert _wait(lambda: len(lines(out)) == 2)
        assert lines(out)[1].split()[2] == str(child)  # not this (the web) process
    finally:
        worker.stop(timeout=1)
    assert DBTaskResult.objects.get(pk=quick.id).status == TaskResultStatus.SUCCESSFUL
    row = DBTaskResult.objects.get(pk=hung.id)
    assert row.status == TaskResultStatus.READY  # given back at once, not after the lease
    assert row.worker_ids == []
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


@pytest.mark.django_db
def test_the_server_does_not_wait_out_the_bound_for_a_worker_child_that_died(
    settings: Any, monkeypatch: Any
) -> None:
    settings.TIDDLY_EMBEDDED_WORKER = True
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "tiddly.no_such_settings")  # fails at setup
    worker = EmbeddedWorker()
    worker.start()
    answer: list[bool] = []
    waiting = threading.Thread(target=lambda: answer.append(worker.wait_ready(3600)), daemon=True)
    waiting.start()
    try:
        assert _wait(lambda: bool(answer))  # the pipe's end, not the hour's bound
        assert answer == [False]
    finally:
        worker.stop(timeout=1)
        waiting.join(5)


def test_the_server_answers_once_its_worker_child_is_set_up(
    settings: Any, monkeypatch: Any
) -> None:
    import asyncio

    from tiddly.asgi import TiddlyASGIHandler
    from tiddly.workers import embedded_worker

    settings.TIDDLY_WORKER_READY_SECONDS = 7
    steps: list[str] = []
    monkeypatch.setattr(embedded_worker, "start", lambda: steps.append("start"))
    monkeypatch.setattr(embedded_worker, "wait_ready", lambda t: steps.append(f"ready {t}"))
    monkeypatch.setattr(embedded_worker, "stop", lambda: steps.append("stop"))
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> dict[str, str]:
        return next(messages)

    async def send(message: dict[str, str]) -> None:
        steps.append(message["type"])

    asyncio.run(TiddlyASGIHandler()({"type": "lifespan"}, receive, send))
    assert steps == [
        "start",
        "ready 7",
        "lifespan.startup.complete",
        "stop",
        "lifespan.shutdown.complete",
    ]
