"""``manage.py import_items <username> <file>``: import a bookmark file or Tiddly export."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from content.history import Actor
from content.portability import importer
from content.queries import Owner
from tiddly.errors import TiddlyError


class Command(BaseCommand):
    help = (
        "Import a Netscape bookmark file (any browser, Pocket, linkding, karakeep) or a Tiddly "
        "JSON export into a user's account."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", choices=importer.FORMATS, help="Default: detect.")
        parser.add_argument("--on-conflict", choices=importer.CONFLICT_CHOICES, default="skip")

    def handle(self, *args: Any, **options: Any) -> None:
        owner = user_named(options["username"])
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        size = path.stat().st_size
        with (
            path.open("rb") as stream,
            tqdm(
                total=size,
                unit="B",
                unit_scale=True,
                desc="Importing",
                disable=not sys.stderr.isatty(),
            ) as bar,
        ):
            try:
                report = importer.import_items(
                    owner=owner,
                    stream=stream,
                    size=size,
                    format=options["format"],
                    on_conflict=options["on_conflict"],
                    actor=Actor(source="import"),
                    progress=bar.update,
                )
            except TiddlyError as exc:
                raise CommandError(exc.message) from None
        self._summary(report)

    def _summary(self, report: importer.ImportReport) -> None:
        created = ", ".join(f"{n} {kind}(s)" for kind, n in report.created.items())
        updated = ", ".join(f"{n} {kind}(s)" for kind, n in report.updated.items())
        self.stdout.write(self.style.SUCCESS(f"Created {created}."))
        self.stdout.write(f"Updated {updated}.")
        self.stdout.write(f"Skipped {report.skipped_count} entr(y/ies).")
        for skip in report.skipped[:20]:
            self.stdout.write(f"  #{skip.index}: {skip.reason}")
        if report.skipped_count > 20:
            self.stdout.write(f"  … and {report.skipped_count - 20} more.")
        if report.matched_count:
            self.stdout.write(f"Matched {report.matched_count} existing item(s).")
        for old, new in report.tags_renamed.items():
            self.stdout.write(f"  tag {old!r} → {new!r}")
        for warning in report.errors:
            self.stdout.write(self.style.WARNING(f"Warning: {warning}"))
        if report.errors_count > len(report.errors):
            self.stdout.write(f"  … and {report.errors_count - len(report.errors)} more warnings.")


def user_named(username: str) -> Owner:
    try:
        return Owner.objects.get(username=username)
    except Owner.DoesNotExist:
        raise CommandError(f"No user named '{username}'.") from None
