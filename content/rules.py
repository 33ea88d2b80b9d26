"""Normalisation and limits for item fields, shared by every write path (REST, admin, MCP).

Each check raises a ``TiddlyError`` whose message names the field and says how to fix it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from content.errors import FieldLimitExceeded
from tiddly.errors import ValidationFailed

SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_url_validator = URLValidator(schemes=["http", "https"])


def limit(name: str) -> int:
    return int(settings.TIDDLY_LIMITS[name])


def check_length(field: str, value: str | None, limit_name: str | None = None) -> None:
    if value is not None and len(value) > limit(limit_name or field):
        raise FieldLimitExceeded(field, len(value), limit(limit_name or field))


def storable(value: str) -> bool:
    """Whether the database can hold (or be queried with) ``value``: PostgreSQL refuses NUL."""
    return "\x00" not in value


def invalid(field: str, message: str) -> ValidationFailed:
    return ValidationFailed({field: [message]})


def normalize_tags(tags: Iterable[str]) -> list[str]:
    """Trim, lower-case and de-duplicate (keeping first-seen order); blank entries are dropped."""
    seen: dict[str, None] = {}
    for raw in tags:
        name = raw.strip().lower()
        if not name:
            continue
        if len(name) > limit("tag"):
            raise FieldLimitExceeded(f"tag '{name[:60]}'", len(name), limit("tag"))
        if not SLUG_RE.match(name):
            raise invalid(
                "tags",
                f"Invalid tag '{name}'. Use lowercase letters, numbers and single hyphens "
                "(e.g. 'machine-learning').",
            )
        seen[name] = None
    if len(seen) > limit("tags_per_item"):
        raise invalid(
            "tags",
            f"Too many tags ({len(seen)}). The maximum is {limit('tags_per_item')} per item.",
        )
    return list(seen)


def normalize_url(url: str) -> str:
    url = url.strip()
    check_length("url", url)
    try:
        _url_validator(url)
    except ValidationError:
        raise invalid(
            "url", "Enter a valid http:// or https:// URL, e.g. 'https://example.com/page'."
        ) from None
    parts = urlsplit(url)
    if not parts.path:
        parts = parts._replace(path="/")
    return urlunsplit(parts)


def require_text(field: str, value: str | None, what: str) -> str:
    if value is None or not value.strip():
        raise invalid(field, f"{what} is required and cannot be blank.")
    return value
