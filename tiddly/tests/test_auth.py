"""Bearer API tokens, session auth and per-user throttling of the REST API (SPEC §8)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from content.tests.helpers import assert_error
from tiddly.auth import tokens
from tiddly.models import ApiToken

pytestmark = pytest.mark.django_db


def notes_url() -> str:
    return reverse("note-list")


def bearer(value: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=value)
    return client


def test_bearer_token_authenticates_as_its_owner(api: Any, owner: Any) -> None:
    response = api.post(notes_url(), {"title": "mine"}, format="json")
    assert response.status_code == 201
    assert api.get(notes_url()).json()["count"] == 1


def test_bearer_keyword_is_case_insensitive(api: Any) -> None:
    assert bearer(f"bearer {api.token}").get(notes_url()).status_code == 200


def test_session_login_also_authenticates(session_api: Any) -> None:
    assert session_api.get(notes_url()).status_code == 200


def test_no_credentials_is_401_not_authenticated_with_www_authenticate(anon: Any) -> None:
    response = anon.get(notes_url())
    body = assert_error(response, 401, "not_authenticated")
    assert "Bearer" in body["message"]
    assert response["WWW-Authenticate"].startswith("Bearer resource_metadata=")


def test_other_authorization_schemes_are_not_authenticated(anon: Any) -> None:
    response = bearer("Basic dXNlcjpwYXNz").get(notes_url())
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer resource_metadata=")


@pytest.mark.parametrize(
    "header",
    [
        "Bearer tdly_not-a-real-token",
        "Bearer not-even-prefixed",
        "Bearer",
        "Bearer tdly_a tdly_b",
        "Bearer tdly_\u00e9t\u00e9",
    ],
)
def test_bad_token_is_401_invalid_token_with_www_authenticate(header: str) -> None:
    response = bearer(header).get(notes_url())
    body = assert_error(response, 401, "invalid_token")
    assert "create_token" in body["message"]
    assert response["WWW-Authenticate"].startswith("Bearer resource_metadata=")


def test_expired_token_is_401(owner: Any) -> None:
    _, plaintext = ApiToken.issue(
        owner=owner, name="old", expires_at=timezone.now() - timedelta(seconds=1)
    )
    response = bearer(f"Bearer {plaintext}").get(notes_url())
    assert_error(response, 401, "invalid_token")
    assert response["WWW-Authenticate"].startswith("Bearer resource_metadata=")


def test_token_with_future_expiry_works(owner: Any) -> None:
    _, plaintext = ApiToken.issue(
        owner=owner, name="new", expires_at=timezone.now() + timedelta(days=1)
    )
    assert bearer(f"Bearer {plaintext}").get(notes_url()).status_code == 200


def test_revoked_token_is_401(api: Any, owner: Any) -> None:
    ApiToken.objects.filter(owner=owner).delete()
    assert_error(api.get(notes_url()), 401, "invalid_token")


def test_token_of_an_inactive_user_is_401(api: Any, owner: Any) -> None:
    owner.is_active = False
    owner.save()
    assert_error(api.get(notes_url()), 401, "invalid_token")


def test_bad_token_is_401_even_on_writes_and_writes_nothing(owner: Any) -> None:
    from content.models import Note

    response = bearer("Bearer tdly_nope").post(notes_url(), {"title": "x"}, format="json")
    assert_error(response, 401, "invalid_token")
    assert not Note.objects.exists()


def test_last_used_at_is_stamped_on_first_use(api: Any, owner: Any) -> None:
    token = ApiToken.objects.get(owner=owner)
    assert token.last_used_at is None
    api.get(notes_url())
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_last_used_at_is_written_at_most_once_a_minute(api: Any, owner: Any) -> None:
    api.get(notes_url())
    token = ApiToken.objects.get(owner=owner)
    first = token.last_used_at
    api.get(notes_url())
    token.refresh_from_db()
    assert token.last_used_at == first
    stale = timezone.now() - timedelta(seconds=61)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=stale)
    tokens.clear()  # the queryset update bypassed the signals that drop the cached token
    api.get(notes_url())
    token.refresh_from_db()
    assert token.last_used_at > stale + timedelta(seconds=60)


# --- throttling ---------------------------------------------------------------------------------


@pytest.fixture
def throttled(settings: Any) -> None:
    """Re-enable the throttles the suite's autouse fixture turns off, with tiny rates."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_CLASSES": [
            "tiddly.throttling.ReadThrottle",
            "tiddly.throttling.WriteThrottle",
        ],
        "DEFAULT_THROTTLE_RATES": {"read": "3/min", "write": "2/min"},
    }


def test_reads_beyond_the_rate_are_429_throttled_with_retry_after(
    api: Any, throttled: None
) -> None:
    for _ in range(3):
        assert api.get(notes_url()).status_code == 200
    response = api.get(notes_url())
    body = assert_error(response, 429, "throttled")
    assert 0 < int(response["Retry-After"]) <= 60
    assert "Retry in" in body["message"]


def test_writes_have_their_own_budget(api: Any, throttled: None) -> None:
    for i in range(2):
        assert api.post(notes_url(), {"title": f"n{i}"}, format="json").status_code == 201
    response = api.post(notes_url(), {"title": "n3"}, format="json")
    assert_error(response, 429, "throttled")
    assert response["Retry-After"]
    assert api.get(notes_url()).json()["count"] == 2


def test_throttling_is_per_user(api: Any, other_api: Any, throttled: None) -> None:
    for _ in range(3):
        api.get(notes_url())
    assert api.get(notes_url()).status_code == 429
    assert other_api.get(notes_url()).status_code == 200


def test_throttling_is_off_when_the_settings_list_no_throttles(api: Any, settings: Any) -> None:
    # DRF copies the throttle classes onto APIView at import; emptying the setting (as the
    # suite's autouse fixture does) must still reach the views.
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_CLASSES": [],
        "DEFAULT_THROTTLE_RATES": {"read": "1/min", "write": "1/min"},
    }
    for _ in range(3):
        assert api.post(notes_url(), {"title": "x"}, format="json").status_code == 201
        assert api.get(notes_url()).status_code == 200


# --- the token cache --------------------------------------------------------------------------


def test_revoking_a_token_that_was_just_used_is_401_at_once(api: Any, owner: Any) -> None:
    assert api.get(notes_url()).status_code == 200  # now cached
    ApiToken.objects.get(owner=owner).delete()
    assert_error(api.get(notes_url()), 401, "invalid_token")


def test_deactivating_a_user_whose_token_is_cached_is_401_at_once(api: Any, owner: Any) -> None:
    assert api.get(notes_url()).status_code == 200
    owner.is_active = False
    owner.save()
    assert_error(api.get(notes_url()), 401, "invalid_token")


def test_expiring_a_cached_token_is_401_at_once(api: Any, owner: Any) -> None:
    assert api.get(notes_url()).status_code == 200
    token = ApiToken.objects.get(owner=owner)
    token.expires_at = timezone.now() - timedelta(seconds=1)
    token.save()
    assert_error(api.get(notes_url()), 401, "invalid_token")


def test_a_cached_token_authenticates_without_a_query(
    api: Any, django_assert_num_queries: Any
) -> None:
    api.get(notes_url())
    from tiddly.auth import BearerTokenAuthentication

    with django_assert_num_queries(0):
        user, _ = BearerTokenAuthentication().authenticate_plaintext(api.token)
    assert user.username == "owner"
