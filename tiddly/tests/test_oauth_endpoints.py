"""Discovery, registration and the authorization/token endpoints' failures (SPEC §8.2)."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model

from tiddly.tests.oauth_support import REDIRECT, hidden_fields, pkce

pytestmark = pytest.mark.django_db
BASE = "http://testserver"
CONTENT = BASE + "/mcp/content"


# --- discovery ----------------------------------------------------------------------------------


def test_authorization_server_metadata_has_the_spec_fields(client: Client) -> None:
    body = client.get("/.well-known/oauth-authorization-server").json()
    assert body == {
        "issuer": BASE,
        "authorization_endpoint": BASE + "/oauth/authorize",
        "token_endpoint": BASE + "/oauth/token",
        "registration_endpoint": BASE + "/oauth/register",
        "revocation_endpoint": BASE + "/oauth/revoke",
        "scopes_supported": ["content:read", "content:write", "prompts:read", "prompts:write"],
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": [
            "none",
            "client_secret_basic",
            "client_secret_post",
        ],
        "revocation_endpoint_auth_methods_supported": [
            "none",
            "client_secret_basic",
            "client_secret_post",
        ],
    }


@pytest.mark.parametrize(
    ("path", "resource", "scopes"),
    [
        ("/mcp/content", CONTENT, ["content:read", "content:write"]),
        ("/mcp/prompts", BASE + "/mcp/prompts", ["prompts:read", "prompts:write"]),
        ("", BASE, ["content:read", "content:write", "prompts:read", "prompts:write"]),
    ],
)
def test_protected_resource_metadata_per_resource(
    client: Client, path: str, resource: str, scopes: list[str]
) -> None:
    body = client.get("/.well-known/oauth-protected-resource" + path).json()
    assert body["resource"] == resource
    assert body["authorization_servers"] == [BASE]
    assert body["scopes_supported"] == scopes
    assert body["bearer_methods_supported"] == ["header"]


def test_public_url_fixes_issuer_and_resources(client: Client, settings: Any) -> None:
    settings.TIDDLY_PUBLIC_URL = "https://tiddly.example.com"
    server = client.get("/.well-known/oauth-authorization-server").json()
    resource = client.get("/.well-known/oauth-protected-resource/mcp/content").json()
    assert server["issuer"] == "https://tiddly.example.com"
    assert server["token_endpoint"] == "https://tiddly.example.com/oauth/token"
    assert resource["resource"] == "https://tiddly.example.com/mcp/content"
    challenge = client.get("/api/notes/")["WWW-Authenticate"]
    assert challenge == (
        'Bearer resource_metadata="https://tiddly.example.com/.well-known/oauth-protected-resource"'
    )


def test_401s_point_at_their_resource_metadata(client: Client) -> None:
    mcp = client.post("/mcp/prompts", {}, content_type="application/json")
    bad = client.get("/api/notes/", HTTP_AUTHORIZATION="Bearer tdlo_nope")
    assert mcp.status_code == 401
    assert mcp["WWW-Authenticate"] == (
        f'Bearer resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp/prompts"'
    )
    assert bad["WWW-Authenticate"] == (
        f'Bearer resource_metadata="{BASE}/.well-known/oauth-protected-resource", '
        'error="invalid_token", error_description="This OAuth access token is expired or '
        "revoked. Refresh it with the refresh token, or reconnect (authorize again) to the "
        f'Tiddly REST API at {BASE}."'
    )


# --- registration -------------------------------------------------------------------------------


def _register(client: Client, body: Any) -> Any:
    raw = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post("/oauth/register", raw, content_type="application/json")


def test_registration_of_a_public_client_returns_a_client_id_without_secret(
    client: Client,
) -> None:
    response = _register(
        client,
        {
            "client_name": "Claude",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
        },
    )
    assert response.status_code == 201
    body = response.json()
    assert "client_secret" not in body
    app = get_application_model().objects.get(client_id=body["client_id"])
    assert (app.name, app.client_type, app.redirect_uris) == ("Claude", "public", REDIRECT)


def test_registration_of_a_confidential_client_returns_its_secret_once(client: Client) -> None:
    response = _register(client, {"redirect_uris": ["https://chatgpt.example/cb"]})
    assert response.status_code == 201
    secret = response.json()["client_secret"]
    app = get_application_model().objects.get()
    assert app.client_type == "confidential"
    assert app.client_secret != secret


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("{not json", "invalid_client_metadata"),
        ("[]", "invalid_client_metadata"),
        ({}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": "https://a.example/cb"}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://a.example/cb#frag"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://a.example/cb"] * 11}, "invalid_redirect_uri"),
        ({"redirect_uris": [REDIRECT], "grant_types": ["password"]}, "invalid_client_metadata"),
        ({"redirect_uris": [REDIRECT], "grant_types": ["implicit"]}, "invalid_client_metadata"),
        ({"redirect_uris": [REDIRECT], "response_types": ["token"]}, "invalid_client_metadata"),
        ({"redirect_uris": [REDIRECT], "scope": "admin"}, "invalid_client_metadata"),
        ({"redirect_uris": [REDIRECT], "client_name": "a\x00b"}, "invalid_client_metadata"),
        ('{"redirect_uris": ["\\ud800"]}', "invalid_client_metadata"),
        (
            {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"},
            "invalid_client_metadata",
        ),
    ],
)
def test_bad_registrations_are_400_with_rfc_bodies_and_store_nothing(
    client: Client, body: Any, error: str
) -> None:
    response = _register(client, body)
    assert response.status_code == 400
    assert response.json()["error"] == error
    assert response.json()["error_description"]
    assert not get_application_model().objects.exists()


@pytest.mark.parametrize(
    "uri", ["http://127.0.0.1:5173/cb", "http://localhost/cb", "http://[::1]:80/cb"]
)
def test_loopback_http_redirects_are_accepted(client: Client, uri: str) -> None:
    assert _register(client, {"redirect_uris": [uri]}).status_code == 201


def test_registration_is_throttled_per_address(client: Client, settings: Any) -> None:
    settings.TIDDLY_OAUTH_REGISTRATIONS_PER_HOUR = 2
    for _ in range(2):
        assert _register(client, {"redirect_uris": [REDIRECT]}).status_code == 201
    response = _register(client, {"redirect_uris": [REDIRECT]})
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert get_application_model().objects.count() == 2


def test_cleanup_removes_registrations_never_used_for_30_days(client: Client, owner: Any) -> None:
    Application = get_application_model()
    for name in ("old unused", "old used", "new unused"):
        _register(client, {"client_name": name, "redirect_uris": [REDIRECT]})
    Application.objects.exclude(name="new unused").update(
        created=timezone.now() - timedelta(days=31)
    )
    get_access_token_model().objects.create(
        user=owner,
        application=Application.objects.get(name="old used"),
        token="tdlo_x",
        expires=timezone.now() + timedelta(hours=1),
        scope="content:read",
    )
    call_command("cleanup_oauth", stdout=StringIO())
    assert set(Application.objects.values_list("name", flat=True)) == {"old used", "new unused"}


# --- authorization and token endpoints ----------------------------------------------------------


@pytest.fixture
def app(client: Client) -> Any:
    body = _register(client, {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
    return get_application_model().objects.get(client_id=body.json()["client_id"])


@pytest.fixture
def person(owner: Any) -> Client:
    browser = Client()
    browser.force_login(owner)
    return browser


def _authorize_url(app: Any, challenge: str | None, **extra: str) -> str:
    query = {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": REDIRECT,
        "scope": "content:read content:write",
        "state": "xyz",
        "resource": CONTENT,
        **extra,
    }
    if challenge is not None:
        query.setdefault("code_challenge", challenge)
        query.setdefault("code_challenge_method", "S256")
    return "/oauth/authorize?" + urlencode(query)


def _redirect_query(response: Any) -> dict[str, str]:
    assert response.status_code == 302, response.content[:500]
    location = response["Location"]
    assert location.startswith(REDIRECT)
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def _consent(person: Client, url: str, *, allow: bool = True) -> dict[str, str]:
    page = person.get(url)
    assert page.status_code == 200, page.content[:500]
    fields = hidden_fields(page.content.decode())
    if allow:
        fields["allow"] = "Allow"
    return _redirect_query(person.post(url, fields))


def _token(client: Client, app: Any, code: str, verifier: str, **extra: str) -> Any:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": app.client_id,
        "code_verifier": verifier,
        **extra,
    }
    return client.post("/oauth/token", urlencode(data), "application/x-www-form-urlencoded")


def test_consent_page_shows_client_redirect_host_and_scopes(
    person: Client, app: Any, client: Client
) -> None:
    app.name = "Claude"
    app.save()
    html = person.get(_authorize_url(app, pkce()[1])).content.decode()
    assert "Claude" in html
    assert "127.0.0.1:8749" in html
    assert "Create and change your bookmarks and notes" in html
    assert 'id="site-name"' in html  # the admin's look


def test_anonymous_authorization_goes_to_the_login_page(client: Client, app: Any) -> None:
    response = client.get(_authorize_url(app, pkce()[1]))
    assert response.status_code == 302
    assert response["Location"].startswith("/oauth/login?next=")
    assert client.get(response["Location"]).status_code == 200


def test_code_exchange_with_the_right_verifier_binds_the_resource(
    person: Client, app: Any, client: Client
) -> None:
    verifier, challenge = pkce()
    query = _consent(person, _authorize_url(app, challenge))
    assert query["state"] == "xyz"
    response = _token(client, app, query["code"], verifier, resource=CONTENT)
    assert response.status_code == 200, response.content
    token = get_access_token_model().objects.get()
    assert token.resource == [CONTENT]
    assert token.scope == "content:read content:write"


def test_deny_redirects_with_access_denied_and_the_state(person: Client, app: Any) -> None:
    query = _consent(person, _authorize_url(app, pkce()[1]), allow=False)
    assert query == {"error": "access_denied", "state": "xyz"} | (
        {"iss": query["iss"]} if "iss" in query else {}
    )


def test_missing_pkce_is_invalid_request(person: Client, app: Any) -> None:
    query = _redirect_query(person.get(_authorize_url(app, None)))
    assert query["error"] == "invalid_request"
    assert query["state"] == "xyz"


def test_plain_pkce_is_refused(person: Client, app: Any) -> None:
    url = _authorize_url(app, "x" * 50, code_challenge_method="plain")
    assert _redirect_query(person.get(url))["error"] == "invalid_request"


def test_a_foreign_resource_is_invalid_target(person: Client, app: Any) -> None:
    url = _authorize_url(app, pkce()[1], resource="https://evil.example/mcp")
    assert _redirect_query(person.get(url))["error"] == "invalid_target"


def test_wrong_verifier_reused_code_and_redirect_mismatch_are_invalid_grant(
    person: Client, app: Any, client: Client
) -> None:
    verifier, challenge = pkce()
    code = _consent(person, _authorize_url(app, challenge))["code"]
    assert _token(client, app, code, "w" * 50).json()["error"] == "invalid_grant"

    verifier, challenge = pkce()
    code = _consent(person, _authorize_url(app, challenge))["code"]
    other_redirect = _token(client, app, code, verifier, redirect_uri="http://127.0.0.1:1/x")
    assert other_redirect.status_code in (400, 401)
    assert other_redirect.json()["error"] in ("invalid_grant", "invalid_request")

    verifier, challenge = pkce()
    code = _consent(person, _authorize_url(app, challenge))["code"]
    assert _token(client, app, code, verifier).status_code == 200
    reused = _token(client, app, code, verifier)
    assert reused.status_code == 400
    assert reused.json()["error"] == "invalid_grant"
    assert _token(client, app, "tampered", verifier).json()["error"] == "invalid_grant"


def test_unregistered_redirect_uri_is_not_redirected_to(person: Client, app: Any) -> None:
    url = _authorize_url(app, pkce()[1], redirect_uri="https://evil.example/cb")
    response = person.get(url)
    assert response.status_code == 400
    assert "evil.example" not in response.get("Location", "")


def test_oauth_tokens_work_on_the_rest_api_with_their_scopes(
    person: Client, app: Any, client: Client
) -> None:
    verifier, challenge = pkce()
    url = _authorize_url(app, challenge, resource=BASE, scope="content:read")
    code = _consent(person, url)["code"]
    token = _token(client, app, code, verifier).json()["access_token"]
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.get("/api/notes/").status_code == 200
    denied = api.post("/api/notes/", {"title": "x"}, content_type="application/json")
    assert denied.status_code == 403
    assert "content:write" in denied.json()["message"]
    assert api.get("/api/prompts/").status_code == 403
    mcp = api.post(
        "/mcp/content", {}, content_type="application/json", HTTP_ACCEPT="application/json"
    )
    assert mcp.status_code == 401  # bound to the REST API
