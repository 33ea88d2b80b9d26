"""``manage.py reindex [--user NAME] [--restart]``: rebuild the meaning index (SPEC §16).

Marks every item (of one user, or all) for indexing and indexes them with a progress bar, holding
the index lease the workers' indexing task takes too (it waits for a run of theirs to end, and
they skip theirs while it runs), so no item is embedded twice at once. It is
resumable: an interrupted run leaves the rest marked, and the next run continues with those
instead of marking everything again (``--restart`` does mark everything again).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from content.models.search import SearchDirty
from content.search import indexing as search_index
from content.search.embeddings import provider
from tiddly.tasks import exclusive, is_held


class Command(BaseCommand):
    help = "Rebuild the vectors used to find items by meaning (resumable)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", help="Only this user's items (username).")
        parser.add_argument(
            "--restart", action="store_true", help="Mark every item again, even mid-run."
        )
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        owner_id = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"No user named {options['user']!r}.")
            owner_id = user.pk
        pending = SearchDirty.objects.all()
        if owner_id is not None:
            pending = pending.filter(owner_id=owner_id)
        if options["restart"] or not pending.exists():
            search_index.mark_all(owner_id=owner_id)
        else:
            self.stdout.write("Resuming: items still marked from an earlier run.")
        total = pending.count()
        if is_held(search_index.INDEX_LEASE):
            self.stdout.write("Waiting for the task workers' indexing run to finish…")
        wait = settings.TIDDLY_TASK_LEASE_SECONDS + 60
        with exclusive(search_index.INDEX_LEASE, wait=wait) as held:
            if not held:
                raise CommandError(
                    f"The task workers kept indexing for {wait} s; run reindex again later "
                    "(what they index is done for it)."
                )
            with tqdm(total=total, unit="item", disable=options["no_progress"]) as bar:
                report = search_index.index_pending(owner_id=owner_id, progress=bar.update)
        if report.unavailable:
            raise CommandError(
                f"Provider unavailable after {report.items} items: {report.unavailable}. "
                "Run reindex again to resume."
            )
        self.stdout.write(
            f"Indexed {report.items} items into {report.chunks} chunks with {provider().model}: "
            f"{report.embedded} embedded, {report.reused} reused."
        )
