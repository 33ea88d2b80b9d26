"""Retention of changes and webhook deliveries, scheduled by the task workers (SPEC §17.1/17.2)."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from content.history.changes import ChangeRecord, record_changes
from content.models.changes import Change
from content.models.webhooks import Webhook, WebhookDelivery
from content.services import webhooks
from content.services.retention import prune_task
from content.tests.changes_support import wait_until_settled
from tiddly import tasks, workers

PRUNE = prune_task.module_path


def _queued() -> int:
    return DBTaskResult.objects.filter(task_path=PRUNE).count()


def _old_and_new(owner: Any) -> tuple[list[int], list[int], Any]:
    records = [
        ChangeRecord(owner_id=owner.pk, item_type="note", item_id=uuid.uuid4(), action="created")
        for _ in range(3)
    ]
    old = record_changes(records[:2])
    Change.objects.filter(id__in=[c.id for c in old]).update(at=timezone.now() - timedelta(days=91))
    new = record_changes(records[2:])
    start = webhooks.feed_end()  # as a webhook made now: the changes above are not its
    hook = Webhook.objects.create(
        owner=owner,
        url="http://127.0.0.1:9/",
        secret="whsec_x",
        fed_xid=start.xid,
        fed_change_id=start.id,
    )
    stale = WebhookDelivery.objects.create(webhook=hook, event="ping")
    WebhookDelivery.objects.filter(pk=stale.pk).update(
        created_at=timezone.now() - timedelta(days=31)
    )
    fresh = WebhookDelivery.objects.create(webhook=hook, event="ping")
    return [c.id for c in old], [c.id for c in new], fresh.pk


@pytest.mark.django_db
def test_a_worker_queues_the_prune_at_start_then_once_per_interval(settings: Any) -> None:
    settings.TIDDLY_PRUNE_INTERVAL = 3600
    due: dict[str, float] = {}

    assert tasks.queue_periodic(due, now=1000.0) == 1  # at start
    assert _queued() == 1
    DBTaskResult.objects.update(status=TaskResultStatus.SUCCESSFUL)
    assert tasks.queue_periodic(due, now=1000.0 + 3599) == 0
    assert tasks.queue_periodic(due, now=1000.0 + 3600) == 1
    assert _queued() == 2


@pytest.mark.django_db
def test_a_prune_already_waiting_in_the_queue_is_not_queued_again(settings: Any) -> None:
    settings.TIDDLY_PRUNE_INTERVAL = 60
    assert tasks.queue_periodic({}, now=0.0) == 1
    assert tasks.queue_periodic({}, now=0.0) == 0  # another worker starting: one is waiting
    assert _queued() == 1


@pytest.mark.django_db
def test_an_interval_of_zero_never_queues_it(settings: Any) -> None:
    settings.TIDDLY_PRUNE_INTERVAL = 0
    assert tasks.queue_periodic({}, now=0.0) == 0
    assert _queued() == 0


@pytest.mark.django_db(transaction=True)  # pruning takes settled (committed) changes only
def test_the_worker_loop_prunes_expired_changes_and_deliveries(
    owner: Any, settings: Any, monkeypatch: Any
) -> None:
    settings.TIDDLY_CHANGES_RETENTION_DAYS = 90
    settings.TIDDLY_WEBHOOK_DELIVERY_DAYS = 30
    settings.TIDDLY_WEBHOOK_WORKERS = 0  # no lane threads: SQLite's in-memory test database
    old, new, fresh = _old_and_new(owner)
    wait_until_settled()
    stop = threading.Event()
    real_run_ready = tasks.run_ready

    def run_once(max_tasks: int | None = None, **options: Any) -> int:
        stop.set()  # one round of the loop
        return real_run_ready(max_tasks, **{**options, "stop": None})

    monkeypatch.setattr(workers, "run_ready", run_once)
    workers.work(stop, interval=0)

    (result,) = DBTaskResult.objects.filter(task_path=PRUNE)
    assert result.status == TaskResultStatus.SUCCESSFUL
    assert result.return_value == {"changes": 2, "deliveries": 1, "history": 0, "tasks": 0}
    assert list(Change.objects.values_list("id", flat=True)) == new
    assert list(WebhookDelivery.objects.values_list("pk", flat=True)) == [fresh]
    assert not Change.objects.filter(id__in=old).exists()


@pytest.mark.django_db(transaction=True)
def test_the_command_prunes_and_says_how_many(owner: Any, settings: Any) -> None:
    settings.TIDDLY_CHANGES_RETENTION_DAYS = 90
    settings.TIDDLY_WEBHOOK_DELIVERY_DAYS = 30
    _, new, fresh = _old_and_new(owner)
    wait_until_settled()
    out = StringIO()

    call_command("prune_changes", stdout=out)

    assert out.getvalue().strip() == (
        "Pruned 2 changes (older than 90 days) and 1 webhook deliveries (older than 30 days); "
        "0 history rows and 0 finished task records."
    )
    assert list(Change.objects.values_list("id", flat=True)) == new
    assert list(WebhookDelivery.objects.values_list("pk", flat=True)) == [fresh]


@pytest.mark.django_db
def test_finished_task_records_are_pruned_after_their_days_queued_ones_never(
    owner: Any, settings: Any
) -> None:
    settings.TIDDLY_TASK_RESULT_DAYS = 7
    for _ in range(3):
        prune_task.enqueue()
    done, failed, waiting = DBTaskResult.objects.order_by("enqueued_at")
    long_ago = timezone.now() - timedelta(days=8)
    DBTaskResult.objects.filter(pk=done.pk).update(
        status=TaskResultStatus.SUCCESSFUL, finished_at=long_ago
    )
    DBTaskResult.objects.filter(pk=failed.pk).update(
        status=TaskResultStatus.FAILED, finished_at=long_ago
    )
    DBTaskResult.objects.filter(pk=waiting.pk).update(enqueued_at=long_ago)
    recent = prune_task.enqueue()
    DBTaskResult.objects.filter(pk=recent.id).update(
        status=TaskResultStatus.SUCCESSFUL, finished_at=timezone.now() - timedelta(days=6)
    )

    assert tasks.prune_finished() == 2

    assert set(DBTaskResult.objects.values_list("pk", flat=True)) == {
        waiting.pk,
        uuid.UUID(recent.id),
    }


@pytest.mark.django_db
def test_the_prune_applies_history_retention_too(owner: Any, settings: Any) -> None:
    from content import services
    from content.history import Actor
    from content.models import ItemVersion, Note
    from content.queries import ItemRef

    settings.TIDDLY_HISTORY_MAX_VERSIONS = 100
    note = services.create_item(
        owner=owner, model=Note, data={"title": "t", "content": "v1"}, actor=Actor()
    )
    for n in range(2, 6):
        ref = ItemRef(model=Note, pk=note.pk)
        services.update_item(owner=owner, ref=ref, data={"content": f"v{n}"}, actor=Actor())
    settings.TIDDLY_HISTORY_MAX_VERSIONS = 2  # lowered since: only the scheduled prune applies it
    before = ItemVersion.objects.filter(item_id=note.pk, version__isnull=False).count()

    pruned = prune_task.call()

    after = ItemVersion.objects.filter(item_id=note.pk, version__isnull=False).count()
    assert pruned["history"] == before - after > 0
    assert after <= 2
