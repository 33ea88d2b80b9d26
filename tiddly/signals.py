"""Revocation reaches every process: changing or deleting a credential or a user moves the
token generation, which each process re-reads within TIDDLY_TOKEN_RECHECK_SECONDS (see
``tiddly.auth``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from oauth2_provider.models import get_access_token_model, get_application_model

from tiddly.auth import bump_generation
from tiddly.models import ApiToken


@receiver(post_delete, sender=ApiToken)
@receiver(post_delete, sender=settings.AUTH_USER_MODEL)
@receiver(post_delete, sender=get_access_token_model())
@receiver(post_delete, sender=get_application_model())
def credential_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    bump_generation()


@receiver(post_save, sender=ApiToken)
@receiver(post_save, sender=settings.AUTH_USER_MODEL)
@receiver(post_save, sender=get_access_token_model())
def credential_saved(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    if not created:  # a new credential cannot be in anyone's cache yet
        bump_generation()
