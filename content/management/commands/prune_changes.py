"""manage.py prune_changes: everything the task workers prune, now: expired changes (feed), webhook
deliveries, version history and finished task records.

Task workers already do this at start and every TIDDLY_PRUNE_INTERVAL seconds; this is for a
deployment that sets that to 0 and prunes from cron instead, or to prune at once.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from content.services.retention import prune_expired


class Command(BaseCommand):
    help = (
        "Prune the change feed (older than TIDDLY_CHANGES_RETENTION_DAYS), webhook deliveries "
        "(older than TIDDLY_WEBHOOK_DELIVERY_DAYS), version history (as prune_history) and "
        "finished task records (older than TIDDLY_TASK_RESULT_DAYS)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        pruned = prune_expired()
        days = settings.TIDDLY_CHANGES_RETENTION_DAYS, settings.TIDDLY_WEBHOOK_DELIVERY_DAYS
        self.stdout.write(
            f"Pruned {pruned['changes']} changes (older than {days[0]} days) and "
            f"{pruned['deliveries']} webhook deliveries (older than {days[1]} days); "
            f"{pruned['history']} history rows and {pruned['tasks']} finished task records."
        )
