"""PKCE challenges of the RFC 7636 shape only, and ``iss`` on every authorization response
(RFC 9207) — SPEC §8.2."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client
from oauth2_provider.models import get_application_model, get_grant_model

from tiddly.tests.oauth_support import REDIRECT, hidden_fields, pkce

pytestmark = pytest.mark.django_db
ISSUER = "http://testserver"


@pytest.fixture
def app(client: Client) -> Any:
    body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    response = client.post("/oauth/register", json.dumps(body), content_type="application/json")
    return get_application_model().objects.get(client_id=response.json()["client_id"])


@pytest.fixture
def person(owner: Any) -> Client:
    browser = Client()
    browser.force_login(owner)
    return browser


def _query(app: Any, challenge: str) -> dict[str, str]:
    return {
        "client_id": app.client_id,
        "response_type": "code",
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st-1",
    }


def _redirect_query(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 302, response.content[:300]
    location = response["Location"]
    assert location.startswith(REDIRECT), location
    return parse_qs(urlsplit(location).query)


@pytest.mark.parametrize(
    "challenge", ["a" * 129, "abc", "a" * 42, "a" * 42 + "!", "a" * 50 + " " + "b" * 10]
)
def test_a_code_challenge_outside_rfc_7636_is_invalid_request_before_consent(
    person: Client, app: Any, challenge: str
) -> None:
    response = person.get("/oauth/authorize?" + urlencode(_query(app, challenge)))
    query = _redirect_query(response)
    assert query["error"] == ["invalid_request"]
    assert "code_challenge" in query["error_description"][0]
    assert query["state"] == ["st-1"]
    assert query["iss"] == [ISSUER]
    assert not get_grant_model().objects.exists()


def test_a_tampered_challenge_in_the_consent_form_issues_no_code(person: Client, app: Any) -> None:
    _, challenge = pkce()
    url = "/oauth/authorize?" + urlencode(_query(app, challenge))
    consent = person.get(url)
    assert consent.status_code == 200
    fields = hidden_fields(consent.content.decode())
    fields.update(code_challenge="c" * 129, allow="Allow")
    query = _redirect_query(person.post(url, fields))
    assert query["error"] == ["invalid_request"]
    assert not get_grant_model().objects.exists()


@pytest.mark.parametrize("length", [43, 128])
def test_challenges_of_43_and_128_characters_get_a_code_with_iss(
    person: Client, app: Any, length: int
) -> None:
    url = "/oauth/authorize?" + urlencode(_query(app, "A-._~" * 25 + "x" * (length - 125)))
    if length == 43:
        url = "/oauth/authorize?" + urlencode(_query(app, "z" * 43))
    consent = person.get(url)
    assert consent.status_code == 200
    fields = hidden_fields(consent.content.decode())
    fields["allow"] = "Allow"
    query = _redirect_query(person.post(url, fields))
    assert "code" in query
    assert query["iss"] == [ISSUER]
    assert query["state"] == ["st-1"]
    assert get_grant_model().objects.count() == 1


def test_a_denied_consent_redirects_with_iss(person: Client, app: Any) -> None:
    _, challenge = pkce()
    url = "/oauth/authorize?" + urlencode(_query(app, challenge))
    fields = hidden_fields(person.get(url).content.decode())
    query = _redirect_query(person.post(url, fields))  # no "allow": denied
    assert query["error"] == ["access_denied"]
    assert query["iss"] == [ISSUER]
