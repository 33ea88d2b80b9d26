"""Printed by `make run`: how a newcomer gets an admin login and an API token."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Explain how to sign in and get an API token."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", default="8000")

    def handle(self, *args: Any, **options: Any) -> None:
        base = f"http://{options['host']}:{options['port']}"
        db = settings.DATABASES["default"]
        has_admin = get_user_model().objects.filter(is_superuser=True).exists()
        lines = [
            "",
            f"Tiddly is starting on {base}  (database: {str(db['ENGINE']).rsplit('.', 1)[-1]} "
            f"{db['NAME']})",
            f"  Admin:        {base}/admin/",
            f"  REST API:     {base}/api/   (docs: {base}/api/docs/)",
            f"  MCP servers:  {base}/mcp/content  and  {base}/mcp/prompts",
            "",
        ]
        if not has_admin:
            lines += [
                "No admin user yet. In another terminal:",
                "  .venv/bin/python manage.py createsuperuser",
            ]
        lines += [
            "Get an API token (for curl, scripts and MCP clients):",
            "  .venv/bin/python manage.py create_token <username> --name my-agent",
            "",
        ]
        self.stdout.write("\n".join(lines))
