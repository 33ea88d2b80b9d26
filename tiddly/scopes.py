"""Scopes (SPEC §8.1): what an API token, an OAuth grant or a session may do.

Four scopes, ``<area>:read`` and ``<area>:write`` for the areas ``content`` (bookmarks, notes,
their tags, links and history) and ``prompts``. Sessions hold all four. The enforcement
primitives are ``HasScope`` (a DRF permission reading the view's ``scope_area``) and
``require_scope`` (for MCP tools, which get the principal from ``request.auth``).

Every REST view states its rule (a test walks the URL map and fails on one that does not):
- ``scope_area = "content"`` / ``"prompts"``: a read (GET, HEAD, OPTIONS, or an action declared
  ``scope_access="read"``) needs ``<area>:read``, anything else ``<area>:write``;
- ``scope_area = ANY_AREA``: a cross-area view (``/api/content/``, ``/api/tags/``) needs the
  access in at least one area and narrows itself to those areas (``readable_areas``);
- its own ``permission_classes`` (the public API root and docs, the session-only tokens API).
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
ANY_AREA = "any"
Access = Literal["read", "write"]


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


def access_for(method: str) -> Access:
    return "read" if method.upper() in SAFE_METHODS else "write"


def scope_for(area: Area, method: str) -> str:
    return f"{area}:{access_for(method)}"


def scopes_of(principal: Any) -> frozenset[str]:
    """The scopes a request's ``auth`` carries; ``None`` (a session or forced login) has all."""
    if principal is None:
        return frozenset(ALL_SCOPES)
    return frozenset(getattr(principal, "scopes", ()))


def readable_areas(principal: Any) -> list[Area]:
    """The areas a caller may read, for cross-area lists (``/api/content/``, ``/api/tags/``)."""
    return areas_with(principal, "read")


def writable_areas(principal: Any) -> list[Area]:
    """The areas a caller may change (a revert by token touches only those)."""
    return areas_with(principal, "write")


def areas_with(principal: Any, access: Access) -> list[Area]:
    held = scopes_of(principal)
    return [area for area in AREAS if f"{area}:{access}" in held]


def require_scope(principal: Any, scope: str) -> None:
    """Raise ``Forbidden`` (403 ``forbidden`` on REST, ``isError`` in MCP) naming ``scope``."""
    require_scopes(principal, [scope])


def require_scopes(principal: Any, scopes: Iterable[str]) -> None:
    """Raise ``Forbidden`` naming every one of ``scopes`` the caller lacks."""
    # Imported here: tiddly.errors imports DRF's views, which load the auth classes, which
    # import this module.
    from tiddly.errors import Forbidden

    held = scopes_of(principal)
    missing = [scope for scope in scopes if scope not in held]
    if missing:
        raise Forbidden(missing_scope_message(missing))


def missing_scope_message(scopes: list[str], *, any_of: bool = False) -> str:
    names = (" or " if any_of else ", ").join(f"'{s}'" for s in scopes)
    plural = "s" if len(scopes) > 1 and not any_of else ""
    flags = " ".join(f"--scope {s}" for s in scopes[: 1 if any_of else None])
    return (
        f"This token lacks the {names} scope{plural}. Use a token created with it (admin, "
        f"/api/tokens/ or `manage.py create_token {flags}`) or, for OAuth, reconnect and "
        "approve it."
    )


def required_scopes(view: Any, method: str) -> tuple[list[str], bool]:
    """What a request needs under ``HasScope``: (scopes, whether any one of them suffices)."""
    area = getattr(view, "scope_area", None)
    access: Access = getattr(view, "scope_access", None) or access_for(method)
    if area is None:
        return list(ALL_SCOPES), False
    if area == ANY_AREA:
        return [f"{a}:{access}" for a in AREAS], True
    return [f"{area}:{access}"], False


class HasScope(permissions.BasePermission):
    """A read needs the view's ``<area>:read`` scope, any other request ``<area>:write``.

    The rules are in the module docstring. A view that declares no area (none should; the
    route-walking test fails on one) is open only to callers holding every scope, so a
    restricted token is refused rather than let through where nobody decided.
    """

    message = "Forbidden."

    def has_permission(self, request: Request, view: Any) -> bool:
        held = scopes_of(getattr(request, "auth", None))
        needed, any_of = required_scopes(view, request.method or "GET")
        granted = [scope for scope in needed if scope in held]
        if granted if any_of else len(granted) == len(needed):
            return True
        missing = needed if any_of else [scope for scope in needed if scope not in held]
        self.message = missing_scope_message(missing, any_of=any_of)
        return False
