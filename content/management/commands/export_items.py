"""``manage.py export_items <username> --format json|netscape|markdown [-o file]``."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from content import item_types
from content.management.commands.import_items import user_named
from content.models import ItemState
from content.portability import exporter
from tiddly.errors import TiddlyError


class Command(BaseCommand):
    help = "Export a user's items as Tiddly JSON, a Netscape bookmark file or a zip of Markdown."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--format", choices=exporter.FORMATS, default="json")
        parser.add_argument("--type", action="append", choices=item_types.type_names())
        parser.add_argument("--view", action="append", choices=ItemState.values)
        parser.add_argument(
            "-o", "--output", type=Path, help="Default: the export's own name, here."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        owner = user_named(options["username"])
        query = {"format": options["format"], "types": options["type"], "views": options["view"]}
        try:
            total = exporter.count_items(owner=owner, **query)
            with tqdm(
                total=total, unit="item", desc="Exporting", disable=not sys.stderr.isatty()
            ) as bar:
                export = exporter.export_items(owner=owner, progress=bar.update, **query)
                path = options["output"] or Path(export.filename)
                with path.open("wb") as out:
                    size = _write(out, export.chunks)
        except TiddlyError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(self.style.SUCCESS(f"Exported {total} item(s) to {path} ({size} bytes)."))


def _write(out: BinaryIO, chunks: Iterable[bytes]) -> int:
    size = 0
    for chunk in chunks:
        out.write(chunk)
        size += len(chunk)
    return size
