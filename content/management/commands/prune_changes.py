"""manage.py prune_changes: drop expired changes (feed) and webhook deliveries now.

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
        "Prune the change feed (older than TIDDLY_CHANGES_RETENTION_DAYS) and webhook deliveries "
        "(older than TIDDLY_WEBHOOK_DELIVERY_DAYS)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        pruned = prune_expired()
        self.stdout.write(
            f"Pruned {pruned['changes']} changes (older than "
            f"{settings.TIDDLY_CHANGES_RETENTION_DAYS} days) and {pruned['deliveries']} webhook "
            f"deliveries (older than {settings.TIDDLY_WEBHOOK_DELIVERY_DAYS} days)."
        )
