from __future__ import annotations

from django.apps import AppConfig


class TiddlyConfig(AppConfig):
    name = "tiddly"
    verbose_name = "Tiddly (API tokens)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tiddly import schema, signals, staticfiles  # noqa: F401  (OpenAPI auth, cache signals, checks)
