"""WSGI entry point (the admin and REST API also run under WSGI; MCP needs ASGI)."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tiddly.settings")

application = get_wsgi_application()
