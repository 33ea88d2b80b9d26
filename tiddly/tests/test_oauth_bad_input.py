"""Bad input never yields a 500 in the OAuth endpoints (issue 9, item 8): RFC error bodies, and
nothing is stored — registration (RFC 7591), token (RFC 6749 §5.2), revocation (RFC 7009) and
authorization."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)

from tiddly.tests.oauth_support import REDIRECT

pytestmark = pytest.mark.django_db
FORM = "application/x-www-form-urlencoded"


def _nothing_issued() -> bool:
    return not (
        get_access_token_model().objects.exists()
        or get_refresh_token_model().objects.exists()
        or get_grant_model().objects.exists()
    )


def _register(client: Client, raw: str | bytes, content_type: str = "application/json") -> Any:
    return client.post("/oauth/register", raw, content_type=content_type)


@pytest.mark.parametrize(
    ("raw", "errors"),
    [
        (
            json.dumps({"redirect_uris": [f"https://a.example/{i}" for i in range(5000)]}),
            "invalid_redirect_uri|invalid_client_metadata",
        ),
        (
            json.dumps({"redirect_uris": ["https://a.example/" + "a" * 100_000]}),
            "invalid_redirect_uri|invalid_client_metadata",
        ),
        (
            json.dumps({"redirect_uris": [REDIRECT], "client_name": "n" * 1_000_000}),
            "invalid_client_metadata",
        ),
        (json.dumps({"redirect_uris": [1, None, ["x"], {"a": 1}]}), "invalid_redirect_uri"),
        (json.dumps({"redirect_uris": [REDIRECT], "client_name": 7}), "invalid_client_metadata"),
        (
            json.dumps({"redirect_uris": [REDIRECT], "grant_types": "authorization_code"}),
            "invalid_client_metadata",
        ),
        (
            json.dumps({"redirect_uris": [REDIRECT], "scope": ["content:read"]}),
            "invalid_client_metadata",
        ),
        (
            json.dumps({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": None}),
            "invalid_client_metadata",
        ),
        ("null", "invalid_client_metadata"),
        ('"just a string"', "invalid_client_metadata"),
        ("1e999999", "invalid_client_metadata"),
        ("[" * 100_000 + "]" * 100_000, "invalid_client_metadata"),
        (b"\xff\xfe not utf-8", "invalid_client_metadata"),
        ("", "invalid_client_metadata"),
    ],
    ids=[
        "5000-redirects",
        "100kB-redirect",
        "1MB-name",
        "redirects-not-strings",
        "name-not-string",
        "grant-types-not-list",
        "scope-not-string",
        "auth-method-null",
        "null",
        "string",
        "huge-number",
        "deep-nesting",
        "not-utf8",
        "empty",
    ],
)
def test_malformed_registrations_are_400_with_rfc_bodies_and_store_nothing(
    client: Client, raw: str | bytes, errors: str
) -> None:
    response = _register(client, raw)
    assert response.status_code == 400, response.content[:300]
    body = response.json()
    assert body["error"] in errors.split("|"), body
    assert isinstance(body["error_description"], str)
    assert not get_application_model().objects.exists()


def test_a_form_encoded_registration_is_refused(client: Client) -> None:
    response = _register(client, urlencode({"redirect_uris": REDIRECT}), FORM)
    assert response.status_code in (400, 415)
    assert "error" in response.json()
    assert not get_application_model().objects.exists()


# --- token endpoint -----------------------------------------------------------------------------


@pytest.fixture
def app(client: Client) -> Any:
    body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    response = _register(client, json.dumps(body))
    return get_application_model().objects.get(client_id=response.json()["client_id"])


def _token(client: Client, data: dict[str, str], content_type: str = FORM) -> Any:
    raw = urlencode(data) if content_type == FORM else json.dumps(data)
    return client.post("/oauth/token", raw, content_type)


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        (
            {"grant_type": "password", "username": "owner", "password": "pw-owner"},
            {"unsupported_grant_type"},
        ),
        ({"grant_type": "client_credentials"}, {"unsupported_grant_type"}),
        (
            {"grant_type": "urn:ietf:params:oauth:grant-type:device_code"},
            {"unsupported_grant_type"},
        ),
        ({"grant_type": "x" * 10_000}, {"unsupported_grant_type"}),
        ({"grant_type": "a\x00b"}, {"unsupported_grant_type", "invalid_request"}),
        ({}, {"unsupported_grant_type", "invalid_request"}),
    ],
    ids=["password", "client_credentials", "device_code", "10kB", "nul", "missing"],
)
def test_unknown_grant_types_are_rfc_errors_and_issue_nothing(
    client: Client, app: Any, owner: Any, data: dict[str, str], errors: set[str]
) -> None:
    response = _token(client, {"client_id": app.client_id, **data})
    assert response.status_code in (400, 401), response.content[:300]
    assert response.json()["error"] in errors
    assert _nothing_issued()


@pytest.mark.parametrize(
    "code",
    ["tampered", "", "a\x00b", "\ud800", "c" * 100_000, "' OR 1=1 --", "%00", "ü" * 50],
    ids=["word", "empty", "nul", "surrogate", "100kB", "sql", "escaped-nul", "non-ascii"],
)
def test_tampered_codes_are_invalid_grant_and_issue_nothing(
    client: Client, app: Any, code: str
) -> None:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": app.client_id,
        "code_verifier": "v" * 50,
    }
    raw = urlencode(data, encoding="utf-8", errors="surrogatepass")
    response = client.post("/oauth/token", raw, FORM)
    assert response.status_code in (400, 401), response.content[:300]
    assert response.json()["error"] in {"invalid_grant", "invalid_request"}
    assert _nothing_issued()


@pytest.mark.parametrize("token", ["tampered", "a\x00b", "r" * 100_000, ""])
def test_tampered_refresh_tokens_are_invalid_grant(client: Client, app: Any, token: str) -> None:
    data = {"grant_type": "refresh_token", "refresh_token": token, "client_id": app.client_id}
    response = _token(client, data)
    assert response.status_code in (400, 401), response.content[:300]
    assert response.json()["error"] in {"invalid_grant", "invalid_request"}
    assert _nothing_issued()


@pytest.mark.parametrize("client_id", ["nope", "a\x00b", "i" * 10_000])
def test_an_unknown_client_is_invalid_client(client: Client, client_id: str) -> None:
    data = {"grant_type": "authorization_code", "code": "x", "client_id": client_id}
    response = _token(client, data)
    assert response.status_code in (400, 401), response.content[:300]
    assert response.json()["error"] in {"invalid_client", "invalid_request"}
    assert _nothing_issued()


def test_a_json_token_request_is_an_rfc_error(client: Client, app: Any) -> None:
    response = _token(
        client, {"grant_type": "authorization_code", "client_id": app.client_id}, "application/json"
    )
    assert response.status_code in (400, 401), response.content[:300]
    assert "error" in response.json()
    assert _nothing_issued()


# --- revocation and authorization ---------------------------------------------------------------


@pytest.mark.parametrize("token", ["tampered", "a\x00b", "t" * 100_000])
def test_revoking_a_tampered_token_is_not_an_error(client: Client, app: Any, token: str) -> None:
    # RFC 7009 §2.2: an invalid token is answered 200 (nothing to revoke).
    data = urlencode({"token": token, "client_id": app.client_id})
    response = client.post("/oauth/revoke", data, FORM)
    assert response.status_code in (200, 400), response.content[:300]


@pytest.mark.parametrize(
    "query",
    [
        {"client_id": "a\x00b", "response_type": "code"},
        {"client_id": "x" * 10_000, "response_type": "code"},
        {"response_type": "code"},
        {"client_id": "APP", "response_type": "code", "state": "s\x00" * 1000},
        {"client_id": "APP", "response_type": "code", "redirect_uri": "\x00"},
        {"client_id": "APP", "response_type": "token", "redirect_uri": REDIRECT},
        {"client_id": "APP", "response_type": "code", "resource": "\x00://"},
        {"client_id": "APP", "response_type": "code", "scope": "admin \x00"},
    ],
    ids=[
        "nul-client",
        "huge-client",
        "no-client",
        "nul-state",
        "nul-redirect",
        "implicit",
        "nul-resource",
        "bad-scope",
    ],
)
def test_garbage_authorization_requests_never_500_or_grant(
    owner: Any, app: Any, query: dict[str, str]
) -> None:
    person = Client()
    person.force_login(owner)
    query = {k: v.replace("APP", app.client_id) for k, v in query.items()}
    response = person.get("/oauth/authorize?" + urlencode(query))
    assert response.status_code < 500, response.content[:300]
    assert _nothing_issued()
