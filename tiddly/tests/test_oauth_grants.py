"""OAuth grants exactly as wide as approved (SPEC §8.2, issue 22).

- ``approval_prompt=auto`` skips consent only for an identical earlier grant;
- a token serves the resource it was issued for: without ``resource``, the REST API only;
- a request without ``scope`` gets its resource's scopes, capped by the client's registration;
- a replayed code revokes what it was exchanged for;
- an invalid OAuth token is told about OAuth, not about API tokens.
"""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model, get_grant_model

from tiddly.models import OAuthClientScope, RedeemedCode
from tiddly.tests.oauth_support import REDIRECT, hidden_fields, live_server, pkce

pytestmark = pytest.mark.django_db
BASE = "http://testserver"
CONTENT = BASE + "/mcp/content"
PROMPTS = BASE + "/mcp/prompts"
CONTENT_SCOPES = "content:read content:write"
ALL = "content:read content:write prompts:read prompts:write"


def _register(client: Client, **metadata: Any) -> Any:
    body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", **metadata}
    response = client.post("/oauth/register", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    return response


@pytest.fixture
def app(client: Client) -> Any:
    client_id = _register(client).json()["client_id"]
    return get_application_model().objects.get(client_id=client_id)


@pytest.fixture
def person(owner: Any) -> Client:
    browser = Client()
    browser.force_login(owner)
    return browser


def _url(app: Any, challenge: str, *, resource: Any = CONTENT, **extra: str) -> str:
    query: list[tuple[str, str]] = [
        ("response_type", "code"),
        ("client_id", app.client_id),
        ("redirect_uri", REDIRECT),
        ("state", "st"),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        *extra.items(),
    ]
    resources = [resource] if isinstance(resource, str) else (resource or [])
    query += [("resource", uri) for uri in resources]
    return "/oauth/authorize?" + urlencode(query)


def _redirect(response: Any) -> dict[str, str]:
    assert response.status_code == 302, response.content[:500]
    assert response["Location"].startswith(REDIRECT), response["Location"]
    return {k: v[0] for k, v in parse_qs(urlsplit(response["Location"]).query).items()}


def _allow(person: Client, url: str, **tamper: str) -> dict[str, str]:
    page = person.get(url)
    assert page.status_code == 200, page.content[:500]
    fields = hidden_fields(page.content.decode())
    fields.update(tamper, allow="Allow")
    return _redirect(person.post(url, fields))


def _exchange(client: Client, app: Any, code: str, verifier: str) -> Any:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": app.client_id,
        "code_verifier": verifier,
    }
    return client.post("/oauth/token", urlencode(data), "application/x-www-form-urlencoded")


def _connect(person: Client, client: Client, app: Any, **kwargs: Any) -> dict[str, Any]:
    """Consent and exchange: the token response."""
    verifier, challenge = pkce()
    code = _allow(person, _url(app, challenge, **kwargs))["code"]
    response = _exchange(client, app, code, verifier)
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def _mcp(path: str, token: str) -> Any:
    return Client().post(
        path,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        content_type="application/json",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def _rest(token: str) -> Any:
    return Client().get("/api/notes/", HTTP_AUTHORIZATION=f"Bearer {token}")


# --- 1. approval_prompt=auto reuses only an identical grant ------------------------------------


@pytest.mark.parametrize(
    "same", [{"scope": CONTENT_SCOPES}, {"scope": "content:read"}], ids=["same", "narrower"]
)
def test_auto_approval_reuses_an_identical_earlier_grant(
    person: Client, client: Client, app: Any, same: dict[str, str]
) -> None:
    _connect(person, client, app, scope=CONTENT_SCOPES)
    url = _url(app, pkce()[1], approval_prompt="auto", **same)
    query = _redirect(person.get(url))  # no consent page: a code at once
    assert "code" in query
    assert get_grant_model().objects.get().scope == same["scope"]


@pytest.mark.parametrize(
    ("resource", "scope"),
    [
        (PROMPTS, CONTENT_SCOPES),
        (None, CONTENT_SCOPES),
        (BASE, CONTENT_SCOPES),
        ([CONTENT, BASE], CONTENT_SCOPES),
        (CONTENT, CONTENT_SCOPES + " prompts:read"),
    ],
    ids=["other-resource", "no-resource", "rest-api", "more-resources", "wider-scopes"],
)
def test_auto_approval_shows_consent_for_any_other_grant(
    person: Client, client: Client, app: Any, resource: Any, scope: str
) -> None:
    _connect(person, client, app, scope=CONTENT_SCOPES)
    url = _url(app, pkce()[1], resource=resource, scope=scope, approval_prompt="auto")
    response = person.get(url)
    assert response.status_code == 200, response.get("Location")
    assert 'name="allow"' in response.content.decode()
    assert not get_grant_model().objects.exists()


def test_auto_approval_of_another_client_or_after_revocation_shows_consent(
    person: Client, client: Client, app: Any
) -> None:
    token = _connect(person, client, app, scope=CONTENT_SCOPES)
    other = get_application_model().objects.get(client_id=_register(client).json()["client_id"])
    assert person.get(_url(other, pkce()[1], approval_prompt="auto")).status_code == 200

    revoked = client.post(
        "/oauth/revoke",
        urlencode({"token": token["access_token"], "client_id": app.client_id}),
        "application/x-www-form-urlencoded",
    )
    assert revoked.status_code == 200
    url = _url(app, pkce()[1], scope=CONTENT_SCOPES, approval_prompt="auto")
    assert person.get(url).status_code == 200
    assert not get_grant_model().objects.exists()


# --- 2. a token serves the resource it was issued for ------------------------------------------


def _assert_refused(response: Any, server: str, wording: str) -> None:
    assert response.status_code == 401
    header = response["WWW-Authenticate"]
    assert f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp/{server}"' in header
    assert 'error="invalid_token"' in header
    description = header.split('error_description="', 1)[1]
    assert f"Reconnect to the Tiddly MCP server {BASE}/mcp/{server}" in description
    assert wording in description
    body = response.json()
    assert body["error"] == "invalid_token"
    assert f"Reconnect to the Tiddly MCP server {BASE}/mcp/{server}" in body["message"]
    assert "API token" not in body["message"]


def test_a_token_issued_without_resource_works_on_the_rest_api_only(
    person: Client, client: Client, app: Any
) -> None:
    token = _connect(person, client, app, resource=None)["access_token"]
    assert get_access_token_model().objects.get().resource == []

    assert _rest(token).status_code == 200
    _assert_refused(_mcp("/mcp/content", token), "content", "issued without a resource")
    _assert_refused(_mcp("/mcp/prompts", token), "prompts", "issued without a resource")


def test_a_token_for_the_content_server_is_refused_by_the_prompt_server(
    person: Client, client: Client, app: Any
) -> None:
    token = _connect(person, client, app, resource=CONTENT)["access_token"]

    assert _mcp("/mcp/content", token).status_code == 200
    _assert_refused(_mcp("/mcp/prompts", token), "prompts", f"issued for {CONTENT}")
    # Bound to an MCP server, it is not a REST API token either.
    rest = _rest(token)
    assert rest.status_code == 401
    assert f"resource={BASE}" in rest.json()["message"]


# --- 3. scopes: the resource's when none are asked for, never more than registered --------------


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        (CONTENT, CONTENT_SCOPES),
        (PROMPTS, "prompts:read prompts:write"),
        (BASE, ALL),
        (None, ALL),
    ],
    ids=["content", "prompts", "rest-api", "none"],
)
def test_a_request_without_scope_gets_the_scopes_of_its_resource(
    person: Client, client: Client, app: Any, resource: Any, expected: str
) -> None:
    page = person.get(_url(app, pkce()[1], resource=resource))
    assert page.status_code == 200
    assert hidden_fields(page.content.decode())["scope"] == expected

    _connect(person, client, app, resource=resource)
    assert get_access_token_model().objects.get().scope == expected


def test_registration_stores_the_clients_scope(client: Client) -> None:
    response = _register(client, scope="content:write content:read")
    assert response.json()["scope"] == CONTENT_SCOPES
    stored = OAuthClientScope.objects.get(application__client_id=response.json()["client_id"])
    assert stored.scope == CONTENT_SCOPES

    unscoped = _register(client).json()
    assert "scope" not in unscoped
    assert not OAuthClientScope.objects.filter(application__client_id=unscoped["client_id"])


@pytest.fixture
def reader(client: Client) -> Any:
    """A client registered with content:read only."""
    client_id = _register(client, scope="content:read").json()["client_id"]
    return get_application_model().objects.get(client_id=client_id)


def test_a_client_registered_with_content_read_cannot_obtain_content_write(
    person: Client, client: Client, reader: Any
) -> None:
    asked = person.get(_url(reader, pkce()[1], scope=CONTENT_SCOPES))
    query = _redirect(asked)
    assert query["error"] == "invalid_scope"
    assert query["state"] == "st"
    assert not get_grant_model().objects.exists()

    # Without scope: the resource's scopes, capped by the registration.
    token = _connect(person, client, reader, resource=CONTENT)
    assert token["scope"] == "content:read"
    assert get_access_token_model().objects.get().scope == "content:read"
    write = _mcp("/mcp/content", token["access_token"])
    assert write.status_code == 200
    names = {tool["name"] for tool in write.json()["result"]["tools"]}
    assert "search_items" in names
    assert "create_note" not in names


def test_a_tampered_consent_form_cannot_widen_the_registered_scope(
    person: Client, reader: Any
) -> None:
    url = _url(reader, pkce()[1], scope="content:read")
    query = _allow(person, url, scope=CONTENT_SCOPES)
    assert query["error"] == "invalid_scope"
    assert not get_grant_model().objects.exists()


def test_a_resource_outside_the_registered_scope_is_invalid_scope(
    person: Client, reader: Any
) -> None:
    query = _redirect(person.get(_url(reader, pkce()[1], resource=PROMPTS)))
    assert query["error"] == "invalid_scope"
    assert not get_grant_model().objects.exists()


# --- 4. a replayed code revokes what it was exchanged for --------------------------------------


def test_a_replayed_code_revokes_the_tokens_issued_from_it(
    person: Client, client: Client, app: Any
) -> None:
    verifier, challenge = pkce()
    code = _allow(person, _url(app, challenge))["code"]
    first = _exchange(client, app, code, verifier).json()
    assert _mcp("/mcp/content", first["access_token"]).status_code == 200
    refreshed = client.post(
        "/oauth/token",
        urlencode(
            {
                "grant_type": "refresh_token",
                "refresh_token": first["refresh_token"],
                "client_id": app.client_id,
            }
        ),
        "application/x-www-form-urlencoded",
    ).json()
    assert _mcp("/mcp/content", refreshed["access_token"]).status_code == 200
    assert RedeemedCode.objects.count() == 1
    assert RedeemedCode.objects.get().code_hash != code  # only its hash is kept

    replay = _exchange(client, app, code, verifier)

    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    assert not get_access_token_model().objects.exists()
    assert _mcp("/mcp/content", refreshed["access_token"]).status_code == 401
    again = client.post(
        "/oauth/token",
        urlencode(
            {
                "grant_type": "refresh_token",
                "refresh_token": refreshed["refresh_token"],
                "client_id": app.client_id,
            }
        ),
        "application/x-www-form-urlencoded",
    )
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"


def test_cleanup_forgets_redeemed_codes_older_than_a_refresh_token(
    person: Client, client: Client, app: Any
) -> None:
    _connect(person, client, app)
    _connect(person, client, app)
    oldest = RedeemedCode.objects.order_by("pk").values_list("pk", flat=True)[0]
    RedeemedCode.objects.filter(pk=oldest).update(created_at=timezone.now() - timedelta(days=31))
    call_command("cleanup_oauth", stdout=StringIO())
    assert RedeemedCode.objects.count() == 1


def test_a_replayed_code_of_another_client_revokes_nothing(
    person: Client, client: Client, app: Any
) -> None:
    verifier, challenge = pkce()
    code = _allow(person, _url(app, challenge))["code"]
    token = _exchange(client, app, code, verifier).json()["access_token"]
    other = get_application_model().objects.get(client_id=_register(client).json()["client_id"])

    assert _exchange(client, other, code, verifier).json()["error"] == "invalid_grant"
    assert _mcp("/mcp/content", token).status_code == 200


# --- 5. invalid OAuth tokens are told about OAuth ----------------------------------------------


def _assert_oauth_message(response: Any, reconnect_to: str) -> None:
    assert response.status_code == 401
    message = response.json()["message"]
    assert "OAuth access token is expired or revoked" in message
    assert "refresh token" in message
    assert reconnect_to in message
    assert "API token" not in message
    assert "create_token" not in message
    assert "OAuth access token is expired or revoked" in response["WWW-Authenticate"]


def test_an_expired_oauth_token_gets_an_oauth_message(
    person: Client, client: Client, app: Any
) -> None:
    token = _connect(person, client, app, resource=None)["access_token"]
    get_access_token_model().objects.update(expires=timezone.now() - timedelta(seconds=1))
    _assert_oauth_message(_rest(token), f"the Tiddly REST API at {BASE}")


def test_a_revoked_oauth_token_gets_an_oauth_message(
    person: Client, client: Client, app: Any
) -> None:
    token = _connect(person, client, app)["access_token"]
    assert _mcp("/mcp/content", token).status_code == 200
    revoked = client.post(
        "/oauth/revoke",
        urlencode({"token": token, "client_id": app.client_id}),
        "application/x-www-form-urlencoded",
    )
    assert revoked.status_code == 200
    _assert_oauth_message(_mcp("/mcp/content", token), f"the Tiddly MCP server {CONTENT}")


def test_an_invalid_api_token_still_gets_the_api_token_message(client: Client) -> None:
    response = client.get("/api/notes/", HTTP_AUTHORIZATION="Bearer tdly_nope")
    assert response.status_code == 401
    assert "API token" in response.json()["message"]


# --- 6. live servers for the OAuth flow take a port the system picks ---------------------------


def test_live_servers_take_ephemeral_ports(transactional_db: None, settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    with live_server() as one, live_server() as two:
        assert one != two
        for base in (one, two):
            answer = httpx.get(base + "/.well-known/oauth-authorization-server", trust_env=False)
            assert answer.status_code == 200
            assert answer.json()["issuer"] == base
