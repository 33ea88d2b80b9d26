"""Per-user throttles for reads and writes (rates in settings, state in the shared cache)."""

from __future__ import annotations

from typing import Any, cast

from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import UserRateThrottle

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


class _SettingsThrottle(UserRateThrottle):
    """A user throttle that follows the *current* REST_FRAMEWORK settings.

    DRF copies DEFAULT_THROTTLE_CLASSES onto APIView and DEFAULT_THROTTLE_RATES onto the throttle
    class once, at import; without this a settings change (override_settings, the tests'
    no-throttling fixture) would never reach the views. A throttle that the settings no longer
    list lets everything through.
    """

    def __init__(self) -> None:
        # The stubs type the rates as ``str | None`` values; DRF stores "N/period" strings.
        self.THROTTLE_RATES = cast("dict[str, str | None]", api_settings.DEFAULT_THROTTLE_RATES)
        super().__init__()

    def enabled(self) -> bool:
        return type(self) in api_settings.DEFAULT_THROTTLE_CLASSES


class ReadThrottle(_SettingsThrottle):
    scope = "read"

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method not in SAFE_METHODS or not self.enabled():
            return True
        return super().allow_request(request, view)


class WriteThrottle(_SettingsThrottle):
    scope = "write"

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS or not self.enabled():
            return True
        return super().allow_request(request, view)


class PreviewThrottle(_SettingsThrottle):
    """Preview fetches and reads a page inside the request: a budget of its own (scope
    ``preview``) on top of the read one, on whenever the other throttles are."""

    scope = "preview"

    def get_rate(self) -> str | None:
        rates = cast("dict[str, str | None]", api_settings.DEFAULT_THROTTLE_RATES)
        # A settings override that names only read and write still gets a preview budget.
        return rates.get("preview") or "30/min"

    def allow_request(self, request: Request, view: Any) -> bool:
        if ReadThrottle not in api_settings.DEFAULT_THROTTLE_CLASSES:
            return True
        return super().allow_request(request, view)
