"""The OAuth flow end to end with the official MCP SDK client against a live server (SPEC §8.2).

The SDK's ``OAuthClientProvider`` discovers the metadata from the 401, registers itself,
sends the person to the authorization URL (the test logs in and allows, as a person would),
exchanges the code with PKCE S256 and retries; then the token is refreshed and revoked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.contrib.auth import get_user_model
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from oauth2_provider.models import get_access_token_model

from tiddly.tests.oauth_support import REDIRECT, Person, live_server


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.fixture
def base(transactional_db: None, settings: Any) -> Iterator[str]:
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    with live_server() as url:
        yield url


@pytest.fixture
def person(base: str) -> Person:
    get_user_model().objects.create_user(username="ada", password="pw-ada")
    return Person(base, "ada", "pw-ada")


def provider(base: str, path: str, person: Person, storage: MemoryStorage) -> OAuthClientProvider:
    codes: list[tuple[str, str | None]] = []

    async def redirect_handler(url: str) -> None:
        query = await asyncio.to_thread(person.authorize, url)
        codes.append((query["code"][0], query.get("state", [None])[0]))

    async def callback_handler() -> tuple[str, str | None]:
        return codes.pop()

    return OAuthClientProvider(
        server_url=base + path,
        client_metadata=OAuthClientMetadata(
            client_name="SDK test client",
            redirect_uris=[REDIRECT],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )


async def _use(base: str, path: str, auth: httpx.Auth, tool: str) -> tuple[list[str], Any]:
    async with (
        httpx.AsyncClient(auth=auth, trust_env=False, timeout=30) as http,
        streamable_http_client(base + path, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        result = await session.call_tool(tool, {})
        return [t.name for t in tools.tools], result


def test_the_sdk_client_connects_with_oauth_refreshes_and_is_revoked(
    base: str, person: Person
) -> None:
    storage = MemoryStorage()
    auth = provider(base, "/mcp/content", person, storage)

    names, result = asyncio.run(_use(base, "/mcp/content", auth, "list_tags"))

    assert "search_items" in names
    assert not result.isError
    assert result.structuredContent == {"tags": []}
    assert storage.tokens is not None
    assert storage.tokens.access_token.startswith("tdlo_")
    token = get_access_token_model().objects.get()
    assert token.resource == [base + "/mcp/content"]
    assert set(token.scope.split()) == {"content:read", "content:write"}
    assert storage.client is not None
    assert storage.client.client_secret is None

    # Refresh: a new pair; the old access token stops working, the new one works.
    old = storage.tokens
    refreshed = httpx.post(
        f"{base}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": old.refresh_token,
            "client_id": storage.client.client_id,
        },
        trust_env=False,
    )
    assert refreshed.status_code == 200, refreshed.text
    new = refreshed.json()
    assert new["refresh_token"] != old.refresh_token
    assert _tools_status(base, "/mcp/content", old.access_token) == 401
    assert _tools_status(base, "/mcp/content", new["access_token"]) == 200
    # The rotated refresh token cannot be used again.
    again = httpx.post(
        f"{base}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": old.refresh_token,
            "client_id": storage.client.client_id,
        },
        trust_env=False,
    )
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"

    # Bound to /mcp/content: refused by /mcp/prompts and the REST API.
    refused = _tools_response(base, "/mcp/prompts", new["access_token"])
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
    assert "oauth-protected-resource/mcp/prompts" in refused.headers["WWW-Authenticate"]

    # Revocation (RFC 7009): the token stops working at once.
    revoked = httpx.post(
        f"{base}/oauth/revoke",
        data={"token": new["access_token"], "client_id": storage.client.client_id},
        trust_env=False,
    )
    assert revoked.status_code == 200
    assert _tools_status(base, "/mcp/content", new["access_token"]) == 401


def test_the_sdk_client_gets_a_prompts_token_for_the_prompt_server(
    base: str, person: Person
) -> None:
    storage = MemoryStorage()
    auth = provider(base, "/mcp/prompts", person, storage)

    names, result = asyncio.run(_use(base, "/mcp/prompts", auth, "list_tags"))

    assert "search_prompts" in names
    assert not result.isError
    token = get_access_token_model().objects.get()
    assert token.resource == [base + "/mcp/prompts"]
    assert set(token.scope.split()) == {"prompts:read", "prompts:write"}
    assert storage.tokens is not None
    assert _tools_status(base, "/mcp/content", storage.tokens.access_token) == 401


def _tools_response(base: str, path: str, token: str) -> httpx.Response:
    return httpx.post(
        base + path,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        trust_env=False,
    )


def _tools_status(base: str, path: str, token: str) -> int:
    return _tools_response(base, path, token).status_code
