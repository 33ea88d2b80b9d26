"""Retention of the change feed and webhook deliveries (SPEC §17.1, §17.2), run on a schedule.

Every task worker queues ``prune_task`` when it starts and then once per ``TIDDLY_PRUNE_INTERVAL``
seconds (``tiddly.tasks.register_periodic``), so `make run` alone keeps both tables to their
retention; ``manage.py prune_changes`` does the same by hand or from cron.
"""

from __future__ import annotations

from typing import TypedDict

from django_tasks import task

from content.history.changes import prune_changes
from content.services.webhooks import prune_deliveries
from tiddly.tasks import register_periodic


class Pruned(TypedDict):
    changes: int
    deliveries: int


def prune_expired() -> Pruned:
    """Drop changes older than TIDDLY_CHANGES_RETENTION_DAYS and deliveries older than
    TIDDLY_WEBHOOK_DELIVERY_DAYS; how many of each. Idempotent."""
    return {"changes": prune_changes(), "deliveries": prune_deliveries()}


@task()
def prune_task() -> Pruned:
    return prune_expired()


register_periodic(prune_task, interval_setting="TIDDLY_PRUNE_INTERVAL")
