"""ASGI entry point: REST API, admin and both MCP servers in one process."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

from tiddly.memory import tune_malloc

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tiddly.settings")

tune_malloc()
application = get_asgi_application()
