"""Scopes (SPEC §8.1): what an API token, an OAuth grant or a session may do.

Four scopes, ``<area>:read`` and ``<area>:write`` for the areas ``content`` (bookmarks, notes,
their tags, links and history) and ``prompts``. Sessions hold all four. The enforcement
primitives are ``HasScope`` (a DRF permission reading the view's ``scope_area``) and
``require_scope`` (for MCP tools, which get the principal from ``request.auth``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from rest_framework import permissions
from rest_framework.request import Request

Area = Literal["content", "prompts"]
AREAS: tuple[Area, ...] = ("content", "prompts")
ALL_SCOPES: tuple[str, ...] = ("content:read", "content:write", "prompts:read", "prompts:write")
DESCRIPTIONS = {
    "content:read": "Read your bookmarks and notes, their tags, links and history",
    "content:write": "Create and change your bookmarks and notes",
    "prompts:read": "Read your prompt templates and render them",
    "prompts:write": "Create and change your prompt templates",
}
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# What a view spanning both areas (export, import) declares as its ``scope_area``: ``HasScope``
# lets in a caller holding the method's scope in at least one area, and the view checks each
# area it actually reads or writes (``readable_areas``, ``require_scope``).
EACH_AREA = "each"


def parse_scopes(value: str | Iterable[str] | None) -> frozenset[str]:
    """The known scopes in a space-separated string (or iterable); unknown names are dropped."""
    if value is None:
        return frozenset()
    names = value.split() if isinstance(value, str) else value
    return frozenset(name for name in names if name in DESCRIPTIONS)


def invalid_scopes(names: Iterable[str]) -> list[str]:
    return sorted(set(names) - set(ALL_SCOPES))


def scope_string(names: Iterable[str]) -> str:
    """Scopes in canonical order, space-separated (as stored and as OAuth writes them)."""
    chosen = set(names)
    return " ".join(s for s in ALL_SCOPES if s in chosen)


def scope_for(area: Area, method: str) -> str:
    return f"{area}:read" if method.upper() in SAFE_METHODS else f"{area}:write"


def scopes_of(principal: Any) -> frozenset[str]:
    """The scopes a request's ``auth`` carries; ``None`` (a session or forced login) has all."""
    if principal is None:
        return frozenset(ALL_SCOPES)
    return frozenset(getattr(principal, "scopes", ()))


def readable_areas(principal: Any) -> list[Area]:
    """The areas a caller may read, for cross-area lists (``/api/content/``, ``/api/tags/``)."""
    held = scopes_of(principal)
    return [area for area in AREAS if f"{area}:read" in held]


def require_scope(principal: Any, scope: str) -> None:
    """Raise ``Forbidden`` (403 ``forbidden`` on REST, ``isError`` in MCP) naming ``scope``."""
    # Imported here: tiddly.errors imports DRF's views, which load the auth classes, which
    # import this module.
    from tiddly.errors import Forbidden

    if scope not in scopes_of(principal):
        raise Forbidden(missing_scope_message([scope]))


def missing_scope_message(scopes: list[str], *, any_of: bool = False) -> str:
    names = ", ".join(f"'{s}'" for s in scopes)
    flags = " ".join(f"--scope {s}" for s in scopes)
    if any_of:
        lacks, flags = f"every one of the {names} scopes", f"--scope {scopes[0]}"
    else:
        lacks = f"the {names} scope{'s' if len(scopes) > 1 else ''}"
    return (
        f"This token lacks {lacks}. Use a token created with it (admin, /api/tokens/ or "
        f"`manage.py create_token {flags}`) or, for OAuth, reconnect and approve it."
    )


class HasScope(permissions.BasePermission):
    """A read needs the view's ``<area>:read`` scope, any other method ``<area>:write``.

    The view declares ``scope_area = "content"`` or ``"prompts"`` (or ``EACH_AREA``, see
    there). A view that declares none
    (cross-area views, views not yet walked) is open only to callers holding every scope, so a
    restricted token is refused rather than let through where nobody decided.
    """

    message = "Forbidden."

    def has_permission(self, request: Request, view: Any) -> bool:
        held = scopes_of(getattr(request, "auth", None))
        area = getattr(view, "scope_area", None)
        if area == EACH_AREA:
            wanted = [scope_for(a, request.method or "GET") for a in AREAS]
            if held.isdisjoint(wanted):
                self.message = missing_scope_message(wanted, any_of=True)
                return False
            return True
        needed = [scope_for(area, request.method or "GET")] if area else list(ALL_SCOPES)
        missing = [scope for scope in needed if scope not in held]
        if missing:
            self.message = missing_scope_message(missing)
            return False
        return True
