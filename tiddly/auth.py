"""Bearer API-token authentication shared by the REST API and both MCP servers."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from tiddly.models import TOKEN_PREFIX, ApiToken, hash_token

# Writing last_used_at on every request would turn each read into a write; a minute's precision
# is all anyone needs from it.
LAST_USED_GRANULARITY = timedelta(minutes=1)

INVALID_TOKEN = (
    "Invalid, expired or revoked API token. Create a new one in the admin, at /api/tokens/, or "
    "with `manage.py create_token`, and send it as 'Authorization: Bearer tdly_…'."
)


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, ApiToken] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN)
        try:
            plaintext = header[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN) from None
        return self.authenticate_plaintext(plaintext)

    def authenticate_plaintext(self, plaintext: str) -> tuple[Any, ApiToken]:
        if not plaintext.startswith(TOKEN_PREFIX):
            raise exceptions.AuthenticationFailed(INVALID_TOKEN)
        token = _lookup(hash_token(plaintext))
        if token is None or token.is_expired or not token.owner.is_active:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN)
        _touch(token)
        return token.owner, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


def cache_key(token_hash: str) -> str:
    return f"tiddly:token:{token_hash}"


def _lookup(token_hash: str) -> ApiToken | None:
    """The token and its owner, from the cache when fresh (a query on every call otherwise).

    Every request authenticates, so this sits on the hot path of REST and MCP alike. Saving or
    deleting a token or its user drops the entry (see ``tiddly.signals``); with several
    processes, configure a shared cache (CACHE_URL) so a revocation reaches all of them at once —
    with per-process memory it takes effect within TIDDLY_TOKEN_CACHE_SECONDS.
    """
    key = cache_key(token_hash)
    token = cache.get(key)
    if token is None:
        token = ApiToken.objects.select_related("owner").filter(token_hash=token_hash).first()
        if token is not None:
            _remember(token)
    return token


def _remember(token: ApiToken) -> None:
    ttl = settings.TIDDLY_TOKEN_CACHE_SECONDS
    if ttl:
        cache.set(cache_key(token.token_hash), token, ttl)


def _touch(token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_GRANULARITY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
        _remember(token)
