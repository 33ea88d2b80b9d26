"""manage.py create_token <username> --name NAME: print a new API token (only its hash is kept)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from tiddly.models import ApiToken
from tiddly.scopes import ALL_SCOPES, scope_string

MAX_NAME = ApiToken._meta.get_field("name").max_length or 100


class Command(BaseCommand):
    help = "Create an API token for a user and print it (the plaintext is shown only once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="cli", help="A label for the token.")
        parser.add_argument("--expires-in-days", type=int, default=None)
        parser.add_argument(
            "--scope",
            action="append",
            choices=ALL_SCOPES,
            dest="scopes",
            help="A scope the token gets (repeatable); default all four.",
        )
        parser.add_argument(
            "--create-user", action="store_true", help="Create the user if it does not exist."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"].strip()
        if not name or len(name) > MAX_NAME:
            raise CommandError(f"--name must be 1 to {MAX_NAME} characters.")
        if options["expires_in_days"] is not None and options["expires_in_days"] < 1:
            raise CommandError("--expires-in-days must be at least 1 (omit it for no expiry).")
        User = get_user_model()
        username = options["username"]
        user = User.objects.filter(username=username).first()
        if user is None:
            if not options["create_user"]:
                raise CommandError(
                    f"No user {username!r}. Create one (manage.py createsuperuser) or pass "
                    "--create-user."
                )
            user = User.objects.create_user(username=username)
        days = options["expires_in_days"]
        expires = timezone.now() + timedelta(days=days) if days else None
        scopes = scope_string(options["scopes"] or ALL_SCOPES)
        _, plaintext = ApiToken.issue(owner=user, name=name, expires_at=expires, scopes=scopes)
        self.stdout.write(plaintext)
