"""Shared OpenAPI helpers: the error body and the responses every endpoint can give."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse

from tiddly.serializers import ErrorOut

_DESCRIPTIONS = {
    400: "Bad request: validation_error, or an action-specific code (no_match, multiple_matches, "
    "overlapping_edits, content_empty, invalid_template, invalid_line_range, "
    "field_limit_exceeded, render_limit_exceeded).",
    401: "not_authenticated / invalid_token (with WWW-Authenticate: Bearer resource_metadata=…).",
    403: "forbidden (e.g. the token lacks the scope the message names).",
    404: "not_found: no such item among yours.",
    409: "conflict (stale expected_updated_at; server_state holds the current item), "
    "name_conflict or url_conflict (existing_id), tag_in_use (filters: [{id, name}]).",
    412: "precondition_failed: stale If-Match (server_state holds the current item).",
    410: "cursor_expired: the changes after this cursor were removed by retention; resync.",
    429: "throttled (Retry-After header).",
    503: "search_unavailable: the embedding provider is off or down (use mode=keyword).",
}


def errors(*codes: int, scoped: bool = True) -> dict[int, Any]:
    """Error responses of an operation: ``codes`` plus 401, 429 and (``scoped``: the operation
    needs a scope, SPEC §8.1) 403."""
    common = (401, 403, 429) if scoped else (401, 429)
    return {
        code: OpenApiResponse(response=ErrorOut, description=_DESCRIPTIONS[code])
        for code in sorted({*common, *codes})
    }


def downloads(*files: tuple[str, Any, str]) -> dict[tuple[int, str], Any]:
    """The 200 responses of a file download, one per ``(media type, OpenAPI type,
    description)``."""
    return {
        (200, media_type): OpenApiResponse(kind, description=description)
        for media_type, kind, description in files
    }


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "tiddly.auth.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "bearerFormat": "tdly_… or OAuth tdlo_…"}


class SessionScheme(OpenApiAuthenticationExtension):
    target_class = "tiddly.auth.SessionAuthentication"
    name = "cookieAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "cookie", "name": "sessionid"}
