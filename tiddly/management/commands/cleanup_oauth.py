"""manage.py cleanup_oauth: remove stale OAuth client registrations and expired tokens.

Dynamic client registration is open to anyone (throttled), so registrations that never led to a
token pile up; those older than TIDDLY_OAUTH_UNUSED_CLIENT_DAYS with no token, refresh token or
pending authorization code are deleted. Then the toolkit's ``cleartokens`` removes expired
tokens and codes, and records of redeemed codes older than a refresh token's lifetime (nothing
issued from them can still be live) go too. Run it daily (cron, a systemd timer).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.utils import timezone
from oauth2_provider.models import get_application_model
from oauth2_provider.settings import oauth2_settings

from tiddly.models import RedeemedCode


def remove_unused_clients(days: int) -> int:
    Application = get_application_model()
    stale = Application.objects.filter(
        registration_source=Application.RegistrationSource.DCR,
        created__lt=timezone.now() - timedelta(days=days),
        accesstoken__isnull=True,
        refreshtoken__isnull=True,
        grant__isnull=True,
    )
    ids = list(stale.values_list("pk", flat=True).distinct())
    Application.objects.filter(pk__in=ids).delete()
    return len(ids)


class Command(BaseCommand):
    help = "Delete OAuth registrations never used for N days and expired OAuth tokens."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--days", type=int, default=settings.TIDDLY_OAUTH_UNUSED_CLIENT_DAYS)

    def handle(self, *args: Any, **options: Any) -> None:
        removed = remove_unused_clients(options["days"])
        call_command("cleartokens")
        lifetime = timedelta(seconds=oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS)
        RedeemedCode.objects.filter(created_at__lt=timezone.now() - lifetime).delete()
        self.stdout.write(f"Removed {removed} unused OAuth client registration(s).")
