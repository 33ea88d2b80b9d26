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
        # Webhooks listen to the change log (a change fans out to the owner's webhooks);
        # retention registers its periodic prune with the task workers.
        # Registers the meaning index's task as the listener of history's marks (SPEC §16).
        import content.search.indexing  # noqa: F401
        from content.services import retention, webhooks  # noqa: F401
