"""Bearer API-token authentication shared by the REST API and both MCP servers."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

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
        token = (
            ApiToken.objects.select_related("owner")
            .filter(token_hash=hash_token(plaintext))
            .first()
        )
        if token is None or token.is_expired or not token.owner.is_active:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN)
        _touch(token)
        return token.owner, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


def _touch(token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_GRANULARITY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
