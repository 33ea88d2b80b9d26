from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.backends.signals import connection_created


def _casefold(value: str | None) -> str | None:
    return None if value is None else value.casefold()


def _register_sqlite_functions(sender: Any, connection: Any, **kwargs: Any) -> None:
    # SQLite's LIKE and LOWER fold ASCII letters only; list search needs "é" to find "É".
    if connection.vendor == "sqlite":
        connection.connection.create_function("TIDDLY_CASEFOLD", 1, _casefold, deterministic=True)


class ContentConfig(AppConfig):
    name = "content"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        connection_created.connect(_register_sqlite_functions)
        register_background_work()


def register_background_work() -> None:
    """What runs besides a request, named here once when the app starts (not as a side effect
    of importing a module): a bookmark's capture after every create, whichever door it came
    through; the task workers' pollers (webhooks' dispatch from the change feed, the meaning
    index's check for marked items, SQLite's log checkpoint) and periodic
    retention pruning. Registering twice is harmless."""
    from content.models import Bookmark
    from content.search import indexing
    from content.services import capture, items, retention, webhooks
    from tiddly import tasks
    from tiddly.sqlite import base as sqlite_base

    items.register_create_effect(Bookmark, capture.CREATE_EFFECT)
    tasks.register_given_up(capture.capture_page, capture.worker_died)
    tasks.register_poller(webhooks.dispatch)
    tasks.register_poller(indexing.poll_marks)
    tasks.register_poller(sqlite_base.checkpoint)
    tasks.register_periodic(retention.prune_task, interval_setting="TIDDLY_PRUNE_INTERVAL")
