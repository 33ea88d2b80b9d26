"""manage.py prune_history: apply the version-history retention rules to every item.

Keeps, per item, at most TIDDLY_HISTORY_MAX_VERSIONS versions and only those younger than
TIDDLY_HISTORY_DAYS days — always the newest one — and drops events older than that and the
history of items that no longer exist. Writes prune opportunistically too; run this daily (cron,
systemd timer) so that items nobody edits any more are pruned as well.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from content.history import prune_all


class Command(BaseCommand):
    help = (
        "Prune version history: keep at most TIDDLY_HISTORY_MAX_VERSIONS versions per item and "
        "only those younger than TIDDLY_HISTORY_DAYS days (always the newest)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        report = prune_all()
        self.stdout.write(
            f"Pruned {report.versions} versions of {report.items} items, {report.events} events "
            f"and {report.orphans} rows of deleted items (keeping at most "
            f"{settings.TIDDLY_HISTORY_MAX_VERSIONS} versions per item and "
            f"{settings.TIDDLY_HISTORY_DAYS} days)."
        )
