"""The one task queue (SPEC §15): on commit only, once each, across workers and crashes."""

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
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from tiddly.tasks import enqueue, requeue_interrupted, run_ready
from tiddly.tests.tasks_support import chain, hang_once, record

ROOT = Path(__file__).resolve().parents[2]
postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="other processes cannot see SQLite's in-memory test database",
)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.django_db
def test_a_task_queued_in_a_rolled_back_transaction_never_runs(
    tmp_path: Path, run_tasks: Any
) -> None:
    out = tmp_path / "runs"

    def failing_write() -> None:
        with transaction.atomic():
            enqueue(record, str(out), "rolled back")
            raise RuntimeError("the write failed")

    with pytest.raises(RuntimeError):
        failing_write()
    enqueue(record, str(out), "committed")

    assert run_tasks() == 1
    assert lines(out) == ["committed"]
    assert DBTaskResult.objects.get().status == TaskResultStatus.SUCCESSFUL


@pytest.mark.django_db
def test_a_task_runs_once_and_what_it_queues_runs_too(tmp_path: Path, run_tasks: Any) -> None:
    out = tmp_path / "runs"
    enqueue(chain, str(out), 2)

    assert run_tasks() == 3
    assert run_tasks() == 0
    assert lines(out) == ["link 2", "link 1", "link 0"]


@pytest.mark.django_db
def test_a_delayed_task_waits_until_it_is_due(tmp_path: Path, run_tasks: Any) -> None:
    out = tmp_path / "runs"
    enqueue(record, str(out), "later", delay=60)

    assert run_tasks() == 0
    assert lines(out) == []
    assert run_tasks(due_within=120) == 1
    assert lines(out) == ["later"]


@pytest.mark.django_db
def test_a_task_running_past_its_lease_is_queued_again_and_runs(
    tmp_path: Path, run_tasks: Any
) -> None:
    out = tmp_path / "runs"
    row = DBTaskResult.objects.get(pk=record.enqueue(str(out), "again").id)
    row.claim("a-worker-that-died")
    DBTaskResult.objects.filter(pk=row.pk).update(
        started_at=timezone.now() - timedelta(seconds=settings.TIDDLY_TASK_LEASE_SECONDS + 1)
    )
    young = record.enqueue(str(out), "still running elsewhere")
    DBTaskResult.objects.filter(pk=young.id).update(
        status=TaskResultStatus.RUNNING, started_at=timezone.now()
    )

    assert requeue_interrupted() == 1
    assert run_tasks() == 1
    assert lines(out) == ["again"]
    assert DBTaskResult.objects.get(pk=row.pk).worker_ids[0] == "a-worker-that-died"
    assert DBTaskResult.objects.get(pk=young.id).status == TaskResultStatus.RUNNING


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_several_workers_run_each_task_exactly_once(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    for n in range(60):
        record.enqueue(str(out), f"task {n}")
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            run_ready()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert errors == []
    assert sorted(lines(out)) == sorted(f"task {n}" for n in range(60))
    rows = DBTaskResult.objects.all()
    assert {row.status for row in rows} == {TaskResultStatus.SUCCESSFUL}
    assert all(len(row.worker_ids) == 1 for row in rows)


def _worker_env() -> dict[str, str]:
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "tiddly.settings"}


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_queued_task_survives_into_a_new_worker_process(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    record.enqueue(str(out), "from the past")

    subprocess.run(
        [sys.executable, "manage.py", "worker", "--once"],
        cwd=ROOT,
        env=_worker_env(),
        check=True,
        timeout=120,
    )

    assert lines(out) == ["from the past"]


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_task_whose_worker_is_killed_runs_again(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    result = hang_once.enqueue(str(marker))
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "worker", "--interval", "0.2"],
        cwd=ROOT,
        env=_worker_env(),
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert lines(marker) == ["started"]
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
    assert DBTaskResult.objects.get(pk=result.id).status == TaskResultStatus.RUNNING

    assert requeue_interrupted(lease_seconds=0) == 1
    run_ready()

    assert lines(marker)[0] == "started"
    assert lines(marker)[1].startswith("finished")
    row = DBTaskResult.objects.get(pk=result.id)
    assert row.status == TaskResultStatus.SUCCESSFUL
    assert len(row.worker_ids) == 2
