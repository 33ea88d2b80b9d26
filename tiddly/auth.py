"""Who is calling: Bearer API tokens, OAuth access tokens and sessions (SPEC §8).

The REST API and both MCP servers authenticate through ``authenticate_bearer``: an API token
(``tdly_…``) or an OAuth access token (``tdlo_…``, issued by ``tiddly.oauth``) becomes the
owning user and a ``Principal`` — what ``request.auth`` holds everywhere — carrying the scopes,
the token's display prefix (for history) and, for OAuth, the resources it was issued for.

Every request authenticates, so tokens are cached per process (``TokenCache``). The cache is
what makes revocation subtle: a revoked token must stop working on every worker within seconds,
also without a shared cache. Each process therefore re-reads one counter
(``TokenGeneration``) at most every ``TIDDLY_TOKEN_RECHECK_SECONDS`` and forgets its tokens when
the counter moved; revoking or changing a token or a user moves it (``tiddly.signals``).
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from django.conf import settings
from django.db.models import F
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from tiddly.models import TOKEN_PREFIX, ApiToken, TokenGeneration, hash_token
from tiddly.oauth import resources
from tiddly.scopes import ALL_SCOPES, parse_scopes

OAUTH_ACCESS_PREFIX = "tdlo_"
DISPLAY_PREFIX_LENGTH = 12
# Writing last_used_at on every request would turn each read into a write; a minute's precision
# is all anyone needs from it.
LAST_USED_GRANULARITY = timedelta(minutes=1)
MAX_CACHED_TOKENS = 10_000

INVALID_TOKEN = (
    "Invalid, expired or revoked token. Create a new API token at /account/tokens/ (signed "
    "in), in the admin, at /api/tokens/, or with `manage.py create_token`, and send it as "
    "'Authorization: Bearer tdly_…' (OAuth clients: refresh the access token or authorize "
    "again)."
)


def _reconnect_to(resource: str | None) -> str:
    if resource is None:
        return "Tiddly"
    mount = resources.mcp_mount_of(resource)
    return f"the Tiddly MCP server {resource}" if mount else f"the Tiddly REST API at {resource}"


def oauth_invalid(resource: str | None) -> str:
    """The message for an OAuth access token that is unknown, revoked or expired (SPEC §8.2):
    about OAuth, not about API tokens."""
    return (
        "This OAuth access token is expired or revoked. Refresh it with the refresh token, or "
        f"reconnect (authorize again) to {_reconnect_to(resource)}."
    )


def oauth_wrong_resource(bound: tuple[str, ...], resource: str | None) -> str:
    issued = (
        f"was issued for {', '.join(bound)}, not for {resource}"
        if bound
        else "was issued without a resource, so it works on the REST API only"
    )
    return (
        f"This OAuth access token {issued}. Reconnect to {_reconnect_to(resource)}: authorize "
        f"again with resource={resource}."
    )


@dataclass(frozen=True)
class Principal:
    """The credential behind a request: ``request.auth`` on REST and MCP alike."""

    kind: Literal["api_token", "oauth", "session"]
    scopes: frozenset[str]
    token_prefix: str | None = None
    resource: tuple[str, ...] = ()
    token: Any = field(default=None, compare=False, repr=False)


SESSION = Principal(kind="session", scopes=frozenset(ALL_SCOPES))


def authenticate_bearer(raw: str, *, resource: str | None = None) -> tuple[Any, Principal]:
    """The user and principal of a bearer token, or ``AuthenticationFailed``.

    ``resource`` is the URL of what is being accessed (an MCP server or the REST API's base);
    an OAuth token bound to other resources (RFC 8707) is refused. API tokens have no binding.
    """
    if raw.startswith(TOKEN_PREFIX):
        return _api_token(raw)
    if raw.startswith(OAUTH_ACCESS_PREFIX):
        return _oauth_token(raw, resource)
    raise exceptions.AuthenticationFailed(INVALID_TOKEN)


def _api_token(raw: str) -> tuple[Any, Principal]:
    key = hash_token(raw)
    entry = tokens.get(key)
    if entry is None:
        token = ApiToken.objects.select_related("owner").filter(token_hash=key).first()
        if token is None:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN)
        entry = (token, _api_principal(token))
        tokens.put(key, entry)
    token, principal = entry
    if token.is_expired or not token.owner.is_active:
        raise exceptions.AuthenticationFailed(INVALID_TOKEN)
    _touch(token)
    return token.owner, principal


def _api_principal(token: ApiToken) -> Principal:
    return Principal(
        kind="api_token", scopes=parse_scopes(token.scopes), token_prefix=token.prefix, token=token
    )


def _oauth_token(raw: str, resource: str | None) -> tuple[Any, Principal]:
    from oauth2_provider.models import get_access_token_model

    key = "oauth:" + hashlib.sha256(raw.encode()).hexdigest()
    entry = tokens.get(key)
    if entry is None:
        token = (
            get_access_token_model()
            .objects.select_related("user")
            .filter(token_checksum=key.removeprefix("oauth:"))
            .first()
        )
        if token is None or token.user is None:
            raise exceptions.AuthenticationFailed(oauth_invalid(resource))
        entry = (token, _oauth_principal(token, raw))
        tokens.put(key, entry)
    token, principal = entry
    if token.is_expired() or not token.user.is_active:
        raise exceptions.AuthenticationFailed(oauth_invalid(resource))
    if not resources.allows(principal.resource, resource):
        raise exceptions.AuthenticationFailed(oauth_wrong_resource(principal.resource, resource))
    return token.user, principal


def _oauth_principal(token: Any, raw: str) -> Principal:
    return Principal(
        kind="oauth",
        scopes=parse_scopes(token.scope),
        token_prefix=raw[:DISPLAY_PREFIX_LENGTH],
        resource=tuple(token.resource or ()),
        token=token,
    )


def _touch(token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_GRANULARITY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


# --- the per-process token cache ----------------------------------------------------------------


class TokenCache:
    """Authenticated tokens of this process, dropped when the revocation generation moves."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, Any]] = {}
        self._generation: int | None = None
        self._next_check = 0.0
        self._lock = threading.Lock()

    def get(self, key: str) -> Any | None:
        if not settings.TIDDLY_TOKEN_CACHE_SECONDS:
            return None
        now = time.monotonic()
        if now >= self._next_check:
            self._sync(now)
        entry = self._entries.get(key)
        if entry is None or entry[0] <= now:
            return None
        return entry[1]

    def put(self, key: str, value: Any) -> None:
        ttl = settings.TIDDLY_TOKEN_CACHE_SECONDS
        if not ttl:
            return
        with self._lock:
            if len(self._entries) >= MAX_CACHED_TOKENS:
                self._entries.clear()
            self._entries[key] = (time.monotonic() + ttl, value)

    def forget(self, key: str) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._next_check = 0.0

    def _sync(self, now: float) -> None:
        generation = current_generation()
        with self._lock:
            if generation != self._generation:
                self._entries.clear()
                self._generation = generation
            self._next_check = now + settings.TIDDLY_TOKEN_RECHECK_SECONDS


tokens = TokenCache()


def current_generation() -> int | None:
    return TokenGeneration.objects.filter(pk=1).values_list("value", flat=True).first()


def bump_generation() -> None:
    """Tell every process to forget its cached tokens (within TIDDLY_TOKEN_RECHECK_SECONDS)."""
    if not TokenGeneration.objects.filter(pk=1).update(value=F("value") + 1):
        TokenGeneration.objects.get_or_create(pk=1, defaults={"value": 1})
    tokens.clear()  # this process: at once


# --- DRF --------------------------------------------------------------------------------------


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, Principal] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN)
        try:
            plaintext = header[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN) from None
        try:
            return authenticate_bearer(plaintext, resource=resources.resource_for_request(request))
        except exceptions.AuthenticationFailed as exc:
            # For the 401's WWW-Authenticate error_description (challenge()).
            setattr(request._request, AUTH_ERROR_ATTRIBUTE, str(exc.detail))
            raise

    def authenticate_plaintext(self, plaintext: str) -> tuple[Any, Principal]:
        return authenticate_bearer(plaintext)

    def authenticate_header(self, request: Request) -> str:
        return challenge(request)


class SessionAuthentication(authentication.SessionAuthentication):
    """Django's session login, as a principal with every scope (SPEC §8.1)."""

    def authenticate(self, request: Request) -> tuple[Any, Principal] | None:
        result = super().authenticate(request)
        return None if result is None else (result[0], SESSION)


AUTH_ERROR_ATTRIBUTE = "tiddly_auth_error"


def challenge(request: Any) -> str:
    """The ``WWW-Authenticate`` value of a 401: where to discover how to get a token (RFC 9728),
    and ``error="invalid_token"`` when a bearer token was sent but is not valid (RFC 6750), with
    why in ``error_description`` (e.g. which MCP server to reconnect to)."""
    value = f'Bearer resource_metadata="{resources.metadata_url_for_request(request)}"'
    sent = request.META.get("HTTP_AUTHORIZATION", "").split(" ", 1)[0].lower() == "bearer"
    if not sent:
        return value
    value += ', error="invalid_token"'
    description = getattr(request, AUTH_ERROR_ATTRIBUTE, None)
    if description:
        value += f', error_description="{_quotable(description)}"'
    return value


def _quotable(text: str) -> str:
    """``text`` in the characters RFC 6750 §3 allows in ``error_description``."""
    text = text.replace("…", "...").replace('"', "'")
    return "".join(c for c in text if " " <= c <= "~" and c != "\\")
