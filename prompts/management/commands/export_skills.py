"""``manage.py export_skills <username> --client claude-code -o skills.tar.gz`` (SPEC §13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from prompts import skills
from tiddly.errors import TiddlyError


class Command(BaseCommand):
    help = "Export a user's active prompts as agent skills (<name>/SKILL.md) in an archive."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--client", default="claude-code", choices=sorted(skills.CLIENTS))
        parser.add_argument("--tags", nargs="*", default=[], help="Only prompts with these tags.")
        parser.add_argument("--tag-match", default="all", choices=["all", "any"])
        parser.add_argument("-o", "--output", required=True, type=Path, help="Archive to write.")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user named {options['username']!r}.")
        try:
            _, data = skills.export(
                user, client=options["client"], tags=options["tags"], tag_match=options["tag_match"]
            )
        except TiddlyError as exc:
            raise CommandError(exc.message) from None
        options["output"].write_bytes(data)
        self.stdout.write(f"Wrote {options['output']} ({len(data)} bytes).")
