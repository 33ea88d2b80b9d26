"""The protected resources Tiddly serves and their public URLs (RFC 8707, RFC 9728).

Three resources: the REST API (identified by the server's base URL, whose metadata lives at
``/.well-known/oauth-protected-resource``) and the two MCP servers (``<base>/mcp/content`` and
``<base>/mcp/prompts``, metadata at the well-known path followed by theirs). The base URL is
``TIDDLY_PUBLIC_URL`` when set (behind a reverse proxy), else the request's scheme and host.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from tiddly.scopes import ALL_SCOPES

WELL_KNOWN_RESOURCE = "/.well-known/oauth-protected-resource"
# The MCP mount points (mcp_bridge/urls.py) and the scopes that mean something on each.
MCP_SCOPES: dict[str, tuple[str, ...]] = {
    "/mcp/content": ("content:read", "content:write"),
    "/mcp/prompts": ("prompts:read", "prompts:write"),
}
DEFAULT_PORTS = {"http": 80, "https": 443}


def public_base(request: Any) -> str:
    return settings.TIDDLY_PUBLIC_URL or f"{request.scheme}://{request.get_host()}"


def mcp_path(path: str) -> str | None:
    for mount in MCP_SCOPES:
        if path == mount or path.startswith(mount + "/"):
            return mount
    return None


def resource_for_request(request: Any) -> str:
    """The resource a request accesses: its MCP server's URL, else the REST API (base URL)."""
    return public_base(request) + (mcp_path(request.path) or "")


def metadata_url_for_request(request: Any) -> str:
    return public_base(request) + WELL_KNOWN_RESOURCE + (mcp_path(request.path) or "")


def scopes_for(path: str) -> tuple[str, ...]:
    return MCP_SCOPES.get(path, ALL_SCOPES)


def known_resources(request: Any) -> list[str]:
    base = public_base(request)
    return [base, *(base + mount for mount in MCP_SCOPES)]


def normalize(uri: str) -> str:
    """Compare resource URIs by scheme, host, port and path (no trailing slash, no query)."""
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return uri
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def is_known(request: Any, uri: str) -> bool:
    return normalize(uri) in {normalize(r) for r in known_resources(request)}


def mcp_mount_of(uri: str) -> str | None:
    """The MCP server a resource URI names (``/mcp/content`` or ``/mcp/prompts``), else None."""
    path = normalize(uri).split("://", 1)[-1].partition("/")[2]
    for mount in MCP_SCOPES:
        if ("/" + path).endswith(mount):
            return mount
    return None


def scopes_for_resources(uris: Sequence[str]) -> tuple[str, ...]:
    """What a request without ``scope`` gets: its resources' scopes (all four for the REST API
    or when no resource is named), in canonical order."""
    if not uris:
        return ALL_SCOPES
    wanted: set[str] = set()
    for uri in uris:
        mount = mcp_mount_of(uri)
        wanted.update(MCP_SCOPES[mount] if mount else ALL_SCOPES)
    return tuple(scope for scope in ALL_SCOPES if scope in wanted)


def allows(bound: Sequence[str], resource: str | None) -> bool:
    """A token bound to ``bound`` may access ``resource`` (``None``: not a request, where only
    an unbound token is accepted). An unbound token (issued without ``resource``) serves the
    REST API only; both MCP servers need a token issued for them (SPEC §8.2)."""
    if resource is None:
        return not bound
    if not bound:
        return mcp_mount_of(resource) is None
    return normalize(resource) in {normalize(r) for r in bound}
