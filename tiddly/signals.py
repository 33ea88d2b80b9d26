"""Drop cached API tokens when a token or its owner changes, so revocation is immediate."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from tiddly.auth import cache_key
from tiddly.models import ApiToken


@receiver([post_save, post_delete], sender=ApiToken)
def forget_token(sender: Any, instance: ApiToken, **kwargs: Any) -> None:
    cache.delete(cache_key(instance.token_hash))


@receiver([post_save, post_delete], sender=settings.AUTH_USER_MODEL)
def forget_user_tokens(sender: Any, instance: Any, **kwargs: Any) -> None:
    hashes = ApiToken.objects.filter(owner_id=instance.pk).values_list("token_hash", flat=True)
    cache.delete_many([cache_key(h) for h in hashes])
