"""Django's debug pages (DJANGO_DEBUG=1 only) without the settings: a page for one traceback
must not also hand out the configuration to whoever caused it (a foreign Host header is enough)."""

from __future__ import annotations

from typing import Any

from django.views.debug import SafeExceptionReporterFilter


class SettingsHidden(SafeExceptionReporterFilter):
    def get_safe_settings(self) -> dict[str, Any]:
        return {}
