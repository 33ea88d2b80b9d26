"""Refuse browser requests from foreign origins to the MCP servers (DNS-rebinding defence).

The MCP streamable-HTTP transport requires servers to validate ``Origin``: a web page on
another origin (or one that rebinds its DNS name to this server) must not drive the tools with
a token it got hold of, or with cookies. Requests without ``Origin`` — agents, CLIs — are not
browsers' and pass. Allowed: the server's own origin (``TIDDLY_PUBLIC_URL`` or the request's
scheme and host) and ``TIDDLY_ALLOWED_ORIGINS``. Runs before authentication, so no tool runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponseBase, JsonResponse

CHECKED_PREFIXES = ("/mcp/",)


class OriginCheckMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        origin = request.headers.get("Origin")
        if (
            origin is not None
            and request.path.startswith(CHECKED_PREFIXES)
            and not origin_allowed(request, origin)
        ):
            return JsonResponse(
                {
                    "error": "forbidden",
                    "message": f"Origin {origin[:200]!r} may not call this server. Browser "
                    "clients must be served from this server's origin or listed in "
                    "TIDDLY_ALLOWED_ORIGINS.",
                },
                status=403,
            )
        return self.get_response(request)


def _origin_of(url: str) -> str:
    parts = urlsplit(url.strip())
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def origin_allowed(request: HttpRequest, origin: str) -> bool:
    try:
        candidate = _origin_of(origin)
    except ValueError:
        return False
    allowed = {_origin_of(o) for o in settings.TIDDLY_ALLOWED_ORIGINS}
    if settings.TIDDLY_PUBLIC_URL:
        allowed.add(_origin_of(settings.TIDDLY_PUBLIC_URL))
    with contextlib.suppress(DisallowedHost):
        allowed.add(f"{request.scheme}://{request.get_host().lower()}")
    return candidate in allowed
