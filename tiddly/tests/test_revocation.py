"""Revocation reaches every process within seconds without a shared cache (SPEC §8).

Another worker is simulated by the token cache's own state: a token cached before a revocation
made elsewhere (a queryset delete sends the signal in this process too, so the cache is seeded
again by hand), then the generation check that runs every TIDDLY_TOKEN_RECHECK_SECONDS.
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tiddly.auth import authenticate_bearer, current_generation, tokens
from tiddly.models import ApiToken, hash_token

pytestmark = pytest.mark.django_db


def test_another_workers_revocation_is_seen_at_the_next_generation_check(owner: Any) -> None:
    token, plaintext = ApiToken.issue(owner=owner, name="t")
    authenticate_bearer(plaintext)
    cached = tokens.get(hash_token(plaintext))
    assert cached is not None

    token.delete()  # elsewhere: bumps the generation in the database
    tokens._entries[hash_token(plaintext)] = (float("inf"), cached)  # this worker's stale cache
    tokens._generation = (current_generation() or 0) - 1
    tokens._next_check = float("inf")  # this worker's next check is still ahead
    assert authenticate_bearer(plaintext)[0] == owner  # still cached: before the check

    tokens._next_check = 0.0  # TIDDLY_TOKEN_RECHECK_SECONDS later
    with pytest.raises(Exception, match="Invalid, expired or revoked"):
        authenticate_bearer(plaintext)


def test_a_cached_token_costs_no_query_between_checks(
    api: APIClient, django_assert_num_queries: Any, settings: Any
) -> None:
    settings.TIDDLY_TOKEN_RECHECK_SECONDS = 3600
    authenticate_bearer(api.token)  # type: ignore[attr-defined]
    with django_assert_num_queries(0):
        authenticate_bearer(api.token)  # type: ignore[attr-defined]


def test_the_generation_check_is_one_query(api: APIClient, django_assert_num_queries: Any) -> None:
    authenticate_bearer(api.token)  # type: ignore[attr-defined]
    tokens._next_check = 0.0
    with django_assert_num_queries(1):
        authenticate_bearer(api.token)  # type: ignore[attr-defined]


def test_deleting_a_token_moves_the_generation(owner: Any) -> None:
    token, _ = ApiToken.issue(owner=owner, name="t")
    before = current_generation() or 0
    token.delete()
    assert (current_generation() or 0) > before


def test_revoking_an_oauth_token_moves_the_generation(owner: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone
    from oauth2_provider.models import get_access_token_model

    access = get_access_token_model().objects.create(
        user=owner, token="tdlo_abc", expires=timezone.now() + timedelta(hours=1), scope=""
    )
    before = current_generation() or 0
    access.revoke()
    assert (current_generation() or 0) > before
