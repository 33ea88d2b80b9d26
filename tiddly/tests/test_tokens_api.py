"""/api/tokens/ (session only) and `manage.py create_token` (SPEC §8)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from content.tests.helpers import assert_error
from tiddly.models import ApiToken, hash_token
from tiddly.scopes import ALL_SCOPES

pytestmark = pytest.mark.django_db


def tokens_url() -> str:
    return reverse("token-list")


def token_url(pk: Any) -> str:
    return reverse("token-detail", args=[pk])


def bearer(plaintext: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


def works(plaintext: str) -> bool:
    return bearer(plaintext).get(reverse("note-list")).status_code == 200


def test_list_shows_the_callers_tokens_without_secrets(
    session_api: Any, owner: Any, other: Any
) -> None:
    mine, _ = ApiToken.issue(owner=owner, name="laptop")
    ApiToken.issue(owner=other, name="theirs")
    response = session_api.get(tokens_url())
    assert response.status_code == 200
    body = response.json()
    assert [row["id"] for row in body] == [str(mine.pk)]
    assert body[0]["name"] == "laptop"
    assert body[0]["prefix"] == mine.prefix
    assert set(body[0]) == {
        "id",
        "name",
        "prefix",
        "scopes",
        "created_at",
        "last_used_at",
        "expires_at",
    }
    assert body[0]["scopes"] == list(ALL_SCOPES)


def test_create_returns_the_plaintext_once_and_stores_only_its_hash(
    session_api: Any, owner: Any
) -> None:
    response = session_api.post(tokens_url(), {"name": " ci "}, format="json")
    assert response.status_code == 201
    body = response.json()
    plaintext = body["token"]
    assert plaintext.startswith("tdly_")
    token = ApiToken.objects.get(pk=body["id"])
    assert token.owner == owner
    assert token.name == "ci"
    assert token.token_hash == hash_token(plaintext)
    assert token.prefix == plaintext[:12] == body["prefix"]
    stored = [str(v) for v in ApiToken.objects.filter(pk=token.pk).values().get().values()]
    assert plaintext not in stored
    assert "token" not in session_api.get(tokens_url()).json()[0]
    assert works(plaintext)


def test_create_with_expiry_sets_expires_at(session_api: Any) -> None:
    body = session_api.post(
        tokens_url(), {"name": "temp", "expires_in_days": 7}, format="json"
    ).json()
    token = ApiToken.objects.get(pk=body["id"])
    expected = timezone.now() + timedelta(days=7)
    assert abs((token.expires_at - expected).total_seconds()) < 60


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": ""},
        {"name": "x" * 101},
        {"name": "ok", "expires_in_days": 0},
        {"name": "ok", "expires_in_days": 10**40},
        {"name": "ok", "expires_in_days": "soon"},
    ],
)
def test_create_with_bad_input_is_400(session_api: Any, body: dict[str, Any]) -> None:
    assert_error(session_api.post(tokens_url(), body, format="json"), 400, "validation_error")
    assert not ApiToken.objects.exists()


def test_rename_changes_only_the_name(session_api: Any, owner: Any) -> None:
    token, plaintext = ApiToken.issue(owner=owner, name="old")
    response = session_api.patch(token_url(token.pk), {"name": "new"}, format="json")
    assert response.status_code == 200
    assert response.json()["name"] == "new"
    token.refresh_from_db()
    assert token.name == "new"
    assert works(plaintext)


def test_revoke_deletes_the_token_and_it_stops_working(session_api: Any, owner: Any) -> None:
    token, plaintext = ApiToken.issue(owner=owner, name="old")
    assert works(plaintext)
    assert session_api.delete(token_url(token.pk)).status_code == 204
    assert not ApiToken.objects.filter(pk=token.pk).exists()
    response = bearer(plaintext).get(reverse("note-list"))
    assert_error(response, 401, "invalid_token")


@pytest.mark.parametrize("method", ["patch", "delete"])
def test_another_users_token_is_404_and_untouched(
    session_api: Any, other: Any, method: str
) -> None:
    token, plaintext = ApiToken.issue(owner=other, name="theirs")
    response = getattr(session_api, method)(token_url(token.pk), {"name": "mine"}, format="json")
    assert_error(response, 404, "not_found")
    token.refresh_from_db()
    assert token.name == "theirs"
    assert works(plaintext)


@pytest.mark.parametrize("pk", ["not-a-uuid", "0190b8a4-0000-7000-8000-000000000000"])
def test_unknown_or_malformed_token_id_is_404(session_api: Any, pk: str) -> None:
    assert_error(session_api.delete(token_url(pk)), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "url_kind"),
    [("get", "list"), ("post", "list"), ("patch", "detail"), ("delete", "detail")],
)
def test_tokens_endpoint_refuses_token_authentication(
    api: Any, owner: Any, method: str, url_kind: str
) -> None:
    token = ApiToken.objects.get(owner=owner)
    url = tokens_url() if url_kind == "list" else token_url(token.pk)
    response = getattr(api, method)(url, {"name": "x"}, format="json")
    body = assert_error(response, 403, "forbidden")
    assert "session" in body["message"]
    assert ApiToken.objects.filter(owner=owner).count() == 1
    token.refresh_from_db()
    assert token.name == "test"


def test_tokens_endpoint_without_auth_is_401(anon: Any) -> None:
    response = anon.get(tokens_url())
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer resource_metadata=")


# --- manage.py create_token ---------------------------------------------------------------------


def test_create_token_command_prints_a_working_token(owner: Any) -> None:
    out = StringIO()
    call_command("create_token", "owner", "--name", "cli-test", stdout=out)
    plaintext = out.getvalue().strip()
    assert plaintext.startswith("tdly_")
    token = ApiToken.objects.get(token_hash=hash_token(plaintext))
    assert (token.owner, token.name, token.expires_at) == (owner, "cli-test", None)
    assert works(plaintext)


def test_create_token_command_with_expiry(owner: Any) -> None:
    out = StringIO()
    call_command("create_token", "owner", "--expires-in-days", "2", stdout=out)
    token = ApiToken.objects.get(token_hash=hash_token(out.getvalue().strip()))
    assert token.expires_at > timezone.now() + timedelta(days=1)


def test_create_token_command_refuses_an_unknown_user(db: None) -> None:
    with pytest.raises(CommandError, match="--create-user"):
        call_command("create_token", "ghost", stdout=StringIO())
    assert not get_user_model().objects.filter(username="ghost").exists()


def test_create_token_command_can_create_the_user(db: None) -> None:
    out = StringIO()
    call_command("create_token", "newbie", "--create-user", stdout=out)
    user = get_user_model().objects.get(username="newbie")
    assert not user.has_usable_password()
    assert works(out.getvalue().strip())
    assert ApiToken.objects.get(owner=user).name == "cli"


@pytest.mark.parametrize(
    "args",
    [
        ["--expires-in-days", "0"],
        ["--expires-in-days", "-3"],
        ["--name", ""],
        ["--name", "x" * 101],
    ],
)
def test_create_token_command_rejects_bad_options(owner: Any, args: list[str]) -> None:
    with pytest.raises(CommandError):
        call_command("create_token", "owner", *args, stdout=StringIO())
    assert not ApiToken.objects.exists()
