"""API tokens: how programs and agents authenticate (SPEC §8)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

import uuid6
from django.conf import settings
from django.db import models
from django.utils import timezone
from oauth2_provider.settings import oauth2_settings

TOKEN_PREFIX = "tdly_"
ALL_SCOPES = "content:read content:write prompts:read prompts:write"
DISPLAY_PREFIX_LENGTH = 12


def hash_token(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()


class ApiToken(models.Model):
    """A bearer token. Only its SHA-256 is stored; the plaintext is shown once, at creation."""

    id = models.UUIDField(primary_key=True, default=uuid6.uuid7, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=DISPLAY_PREFIX_LENGTH, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    #: The plaintext, on the instance ``issue`` returns and nowhere else: never stored.
    plaintext: str | None = None
    # Space-separated, in the canonical order of tiddly.scopes.ALL_SCOPES (like OAuth's scope).
    scopes = models.CharField(max_length=100, default=ALL_SCOPES)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @classmethod
    def issue(
        cls,
        *,
        owner: object,
        name: str,
        expires_at: datetime | None = None,
        scopes: str = ALL_SCOPES,
    ) -> tuple[ApiToken, str]:
        """Create a token and return it with its plaintext (the only time it exists)."""
        plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(
            owner=owner,
            name=name,
            token_hash=hash_token(plaintext),
            prefix=plaintext[:DISPLAY_PREFIX_LENGTH],
            expires_at=expires_at,
            scopes=scopes,
        )
        token.plaintext = plaintext
        return token, plaintext


class TokenGeneration(models.Model):
    """One row whose counter goes up whenever a credential is revoked or changed.

    Each process caches authenticated tokens; it re-reads this counter every few seconds and
    forgets its cache when the counter moved, so a revocation made by any worker reaches all of
    them without a shared cache (``tiddly.auth``).
    """

    value = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = "token generation"

    def __str__(self) -> str:
        return f"token generation {self.value}"


class OAuthClientScope(models.Model):
    """The ``scope`` a dynamically registered OAuth client asked for (RFC 7591 §2): the most it
    can ever be granted (SPEC §8.2). A client registered without one has no such cap."""

    application = models.OneToOneField(
        oauth2_settings.APPLICATION_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="tiddly_scope",
    )
    # Space-separated, canonical order (tiddly.scopes.scope_string).
    scope = models.CharField(max_length=100)

    class Meta:
        verbose_name = "OAuth client scope"

    def __str__(self) -> str:
        return self.scope


class RedeemedCode(models.Model):
    """An authorization code already exchanged, and what it was exchanged for.

    The toolkit deletes a grant once used, so without this record a replayed code is only
    unknown. With it, a replay revokes the tokens first issued from the code — and every token
    rotated from them (the refresh token's family) — as RFC 6749 §4.1.2 asks.
    """

    code_hash = models.CharField(max_length=64, db_index=True)
    application = models.ForeignKey(oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE)
    token_family = models.UUIDField(null=True, blank=True)
    access_token = models.ForeignKey(
        oauth2_settings.ACCESS_TOKEN_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "redeemed authorization code"

    def __str__(self) -> str:
        return f"code {self.code_hash[:12]}…"


class TaskLock(models.Model):
    """A named lease one worker (or command) holds while it does work no one else may do at the
    same time (``tiddly.tasks.exclusive``): renewed while held, taken over once expired, so a
    holder that died frees it after the task lease."""

    name = models.CharField(max_length=100, primary_key=True)
    holder = models.CharField(max_length=100)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} held by {self.holder} until {self.expires_at}"
