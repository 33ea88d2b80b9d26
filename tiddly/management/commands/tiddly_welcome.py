"""Printed by `make run`: how a newcomer gets an admin login and an API token."""

from __future__ import annotations

import socket
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
            *_host_advice(options["host"], options["port"]),
            *_debug_advice(),
        ]
        self.stdout.write("\n".join(lines))


def _host_advice(host: str, port: str) -> list[str]:
    """What to set when the server listens where the allowed host names do not reach: Django
    answers 400 to a request whose Host header is not in DJANGO_ALLOWED_HOSTS."""
    allowed = list(settings.ALLOWED_HOSTS)
    wildcard = host in ("0.0.0.0", "::", "")
    if "*" in allowed or (not wildcard and host.strip("[]") in {h.strip("[]") for h in allowed}):
        return []
    guess = socket.gethostname()
    where = "every interface" if wildcard else host
    return [
        f"Listening on {where}, but only these host names are answered: {', '.join(allowed)}.",
        "Other machines reach this one by a name or address of its own: list them in",
        "DJANGO_ALLOWED_HOSTS (comma-separated) or they get 400 Bad Request, e.g.",
        f"  DJANGO_ALLOWED_HOSTS={','.join([guess, *allowed])} make run HOST={host} PORT={port}",
        "",
    ]


def _debug_advice() -> list[str]:
    if settings.DEBUG:
        return [
            "DJANGO_DEBUG is on: error pages show your settings and routes to anyone who can",
            "reach this server. Use it only on 127.0.0.1, while developing.",
            "",
        ]
    return []
