from __future__ import annotations

from django.apps import AppConfig


class ContentConfig(AppConfig):
    name = "content"
    default_auto_field = "django.db.models.BigAutoField"
