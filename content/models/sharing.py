"""A public share link: one per item, a random capability token, revoked by deleting the row."""

from __future__ import annotations

import hashlib
import secrets

import uuid6
from django.conf import settings
from django.db import models
from django.utils import timezone

# 32 random bytes = 256 bits; token_urlsafe gives 43 URL-safe characters.
TOKEN_BYTES = 32


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def share_url(token: str, origin: str) -> str:
    """The public page's absolute URL (``TIDDLY_PUBLIC_URL`` when set, else where it was made)."""
    return f"{settings.TIDDLY_PUBLIC_URL or origin}/s/{token}"


def token_digest(token: str) -> str:
    """What a link is looked up by: comparing digests in the index never tells a guesser how many
    leading characters of a real token they got right."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Share(models.Model):
    """An item's public link. Items of any type are addressed like history rows (type + id), so
    a new item type is shareable without a schema change. Unsharing deletes the row; rotating
    replaces the token in place, so the old URL stops resolving in the same commit."""

    id = models.UUIDField(primary_key=True, default=uuid6.uuid7, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="shares"
    )
    item_type = models.CharField(max_length=10)
    item_id = models.UUIDField()
    # The token is kept (not only its digest) because the item shows its share URL (SPEC §17.4).
    token = models.CharField(max_length=64, unique=True)
    token_hash = models.CharField(max_length=64, unique=True)
    # The origin the link was made on (scheme://host); ``TIDDLY_PUBLIC_URL`` wins when set.
    origin = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["item_type", "item_id"], name="share_one_per_item")
        ]
        indexes = [models.Index(fields=["owner", "-created_at"], name="share_owner_time")]

    def __str__(self) -> str:
        return f"{self.item_type} {self.item_id}"

    @property
    def url(self) -> str:
        return share_url(self.token, self.origin)

    def set_token(self, token: str | None = None) -> str:
        self.token = token or new_token()
        self.token_hash = token_digest(self.token)
        return self.token
