"""ASGI entry point: REST API, admin and both MCP servers in one process."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tiddly.settings")

application = get_asgi_application()
