"""Content's domain errors (SPEC §3.4): what a content service or read refuses, and why.

Each class carries its HTTP status and machine code, and ``body()`` (from ``TiddlyError``) gives
the JSON both doors send: the REST exception handler in ``tiddly.errors`` and the MCP bridge's
``isError`` results read only those, so neither needs to know these classes. The generic ones
every app shares (``ValidationFailed``, ``NotFound``, ``Forbidden``) stay in ``tiddly.errors``.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from tiddly.errors import TiddlyError


class FieldLimitExceeded(TiddlyError):
    code = "field_limit_exceeded"

    def __init__(
        self,
        field: str,
        length: int,
        limit: int,
        unit: str = "characters",
        message: str | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(
            message
            or f"{field} is {length} {unit} long; the limit is {limit}. Shorten it and retry.",
            field=field,
            length=length,
            limit=limit,
            **extra,
        )


class InvalidLineRange(TiddlyError):
    """A partial read asked for lines the item does not have (the message gives its total)."""

    code = "invalid_line_range"


class NoMatch(TiddlyError):
    """str-replace found ``old_str`` nowhere, not even ignoring whitespace or indentation."""

    code = "no_match"


class MultipleMatches(TiddlyError):
    """``old_str`` occurs more than once and ``replace_all`` was not asked for; the body lists
    each match with its line so the caller can widen ``old_str``."""

    code = "multiple_matches"


class OverlappingEdits(TiddlyError):
    """Two edits of one request matched overlapping text (``edit_indexes``, ``lines``)."""

    code = "overlapping_edits"


class ContentEmpty(TiddlyError):
    """An edit of an item that has no content (nothing to match against)."""

    code = "content_empty"


class BadState(TiddlyError):
    """A lifecycle action that does not apply to the item's current state (e.g. unarchive)."""

    code = "validation_error"

    def __init__(self, message: str) -> None:
        super().__init__(message, fields={})


class NameConflict(TiddlyError):
    """Another of the owner's items, tags or filters already has this name."""

    status_code = HTTPStatus.CONFLICT
    code = "name_conflict"


class TagInUse(NameConflict):
    """A tag that saved filters use cannot be deleted; ``filters`` lists them. (A 409 like a
    name conflict: subclassing keeps the status without re-declaring it.)"""

    code = "tag_in_use"


class UrlConflict(TiddlyError):
    """Another of the owner's active bookmarks already has this URL."""

    status_code = HTTPStatus.CONFLICT
    code = "url_conflict"


class StaleItem(TiddlyError):
    """The item changed since the caller loaded it; carries the current state to merge with."""

    status_code: int = HTTPStatus.CONFLICT
    code = "conflict"

    def __init__(self, server_state: Mapping[str, Any], message: str | None = None) -> None:
        message = message or (
            "This item was modified since you loaded it. Nothing was saved. Re-apply your "
            "change to server_state and retry with its updated_at as expected_updated_at."
        )
        if server_state.get("content_omitted"):
            message += (
                f" server_state leaves out the content ({server_state.get('content_length')} "
                "characters, too long to send back): re-read the lines you need with a partial "
                "read (start_line/end_line) before you retry."
            )
        super().__init__(message, server_state=server_state)


class PreconditionFailed(StaleItem):
    status_code = HTTPStatus.PRECONDITION_FAILED
    code = "precondition_failed"

    def __init__(self, server_state: Mapping[str, Any]) -> None:
        super().__init__(
            server_state,
            "If-Match does not match the item's current ETag: it changed since you loaded it. "
            "Nothing was saved. Re-read it (server_state holds the current version) and retry.",
        )


class CursorExpired(TiddlyError):
    """A change-feed cursor older than the oldest change kept (SPEC §17.1)."""

    status_code = HTTPStatus.GONE
    code = "cursor_expired"


class SearchUnavailable(TiddlyError):
    """Search by meaning was asked for while the embedding provider is off or down (SPEC §16)."""

    status_code = HTTPStatus.SERVICE_UNAVAILABLE
    code = "search_unavailable"
