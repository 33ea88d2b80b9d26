"""Per-user throttles for reads and writes (rates in settings, state in the shared cache)."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import UserRateThrottle

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


class ReadThrottle(UserRateThrottle):
    scope = "read"

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method not in SAFE_METHODS:
            return True
        return super().allow_request(request, view)


class WriteThrottle(UserRateThrottle):
    scope = "write"

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return super().allow_request(request, view)
