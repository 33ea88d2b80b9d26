from __future__ import annotations

from django.apps import AppConfig


class PromptsConfig(AppConfig):
    name = "prompts"
    default_auto_field = "django.db.models.BigAutoField"
