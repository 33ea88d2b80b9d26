"""Authentication and HTTP methods of both MCP endpoints (SPEC §7, §8)."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.utils import timezone

from mcp_bridge.tests.conftest import CONTENT, PROMPTS, Mcp, http_client, mcp_session
from tiddly.models import ApiToken

ENDPOINTS = [CONTENT, PROMPTS]
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def post(path: str, authorization: str | None, body: Any = LIST_TOOLS) -> httpx.Response:
    headers = dict(MCP_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization

    async def go() -> httpx.Response:
        async with http_client(None) as http:
            return await http.post(path, json=body, headers=headers)

    return asyncio.run(go())


def assert_401(response: httpx.Response, error: str) -> None:
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer resource_metadata=")
    assert response.json()["error"] == error


@pytest.mark.parametrize("path", ENDPOINTS)
def test_a_call_without_a_token_is_401_with_a_bearer_challenge(
    path: str, transactional_db: None
) -> None:
    assert_401(post(path, None), "not_authenticated")


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("header", ["Bearer tdly_nope", "Bearer nope", "Bearer a b"])
def test_a_call_with_an_invalid_token_is_401(path: str, header: str, mcp_owner: Any) -> None:
    assert_401(post(path, header), "invalid_token")


@pytest.mark.parametrize("path", ENDPOINTS)
def test_a_call_with_an_expired_token_is_401(path: str, mcp_owner: Any) -> None:
    _, plaintext = ApiToken.issue(
        owner=mcp_owner, name="old", expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert_401(post(path, f"Bearer {plaintext}"), "invalid_token")


@pytest.mark.parametrize("path", ENDPOINTS)
def test_a_call_with_a_revoked_token_is_401(path: str, owner_token: Any) -> None:
    token, plaintext = owner_token
    assert post(path, f"Bearer {plaintext}").status_code == 200
    token.delete()
    assert_401(post(path, f"Bearer {plaintext}"), "invalid_token")


def test_a_call_of_a_deactivated_user_is_401(owner_token: Any, mcp_owner: Any) -> None:
    mcp_owner.is_active = False
    mcp_owner.save()
    assert_401(post(CONTENT, f"Bearer {owner_token[1]}"), "invalid_token")


def test_a_token_sent_with_another_scheme_is_401(owner_token: Any) -> None:
    assert_401(post(CONTENT, f"Token {owner_token[1]}"), "not_authenticated")


def test_the_official_client_gets_a_401_without_a_valid_token(transactional_db: None) -> None:
    async def connect() -> None:
        async with mcp_session(CONTENT, "tdly_invalid"):
            pass  # pragma: no cover

    with pytest.raises(BaseExceptionGroup) as caught:
        asyncio.run(connect())
    errors = caught.value.exceptions
    assert isinstance(errors[0], httpx.HTTPStatusError)
    assert errors[0].response.status_code == 401


@pytest.mark.parametrize("path", ENDPOINTS)
def test_a_valid_token_lists_the_tools(path: str, owner_token: Any) -> None:
    response = post(path, f"Bearer {owner_token[1]}")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["result"]["tools"]


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_answer_405(path: str, method: str, owner_token: Any) -> None:
    async def go() -> httpx.Response:
        async with http_client(owner_token[1]) as http:
            return await http.request(method, path, headers={"Accept": "text/event-stream"})

    response = asyncio.run(go())
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
    assert response.json()["error"] == "method_not_allowed"


# --- a real server: a GET must not take the process down ----------------------------------------


def test_an_sse_get_is_405_and_the_process_keeps_serving(
    live_server_url: str, owner_token: Any
) -> None:
    headers = {"Authorization": f"Bearer {owner_token[1]}"}
    with httpx.Client(base_url=live_server_url, headers=headers, timeout=5, trust_env=False) as c:
        for path in ENDPOINTS:
            get = c.get(path, headers={"Accept": "text/event-stream"})
            assert get.status_code == 405
        assert c.get("/api/notes/").status_code == 200
        call = c.post(CONTENT, json=LIST_TOOLS, headers=MCP_HEADERS)
        assert call.status_code == 200
        assert json.loads(call.content)["result"]["tools"]


def test_the_official_client_works_against_a_live_server(
    live_server_url: str, owner_token: Any
) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def go() -> Any:
        headers = {"Authorization": f"Bearer {owner_token[1]}"}
        async with (
            httpx.AsyncClient(headers=headers, trust_env=False) as http,
            streamable_http_client(live_server_url + CONTENT, http_client=http) as (r, w, _),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            return await session.call_tool("create_note", {"title": "live"})

    result = asyncio.run(go())
    assert not result.isError
    assert result.structuredContent["title"] == "live"  # type: ignore[index]


# --- throttling ---------------------------------------------------------------------------------


@pytest.fixture
def throttled(settings: Any) -> None:
    from django.core.cache import cache

    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_CLASSES": [
            "tiddly.throttling.ReadThrottle",
            "tiddly.throttling.WriteThrottle",
        ],
        "DEFAULT_THROTTLE_RATES": {"read": "5/min", "write": "1/min"},
    }
    cache.clear()


def test_mcp_reads_and_writes_use_the_rest_budgets(throttled: None, content_mcp: Mcp) -> None:
    # Everything but a tools/call of a tool that writes is a read: this session's initialize,
    # initialized notification and the client's tools/list (to validate the result) make 3.
    content_mcp.ok("create_note", title="first")  # writes: 1
    response = post(
        CONTENT,
        f"Bearer {content_mcp.token}",
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "create_note", "arguments": {"title": "second"}},
        },
    )
    # A throttled tool call is an isError result the agent can act on (SPEC §7), not a 429.
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is True
    assert response.json()["result"]["structuredContent"]["error"] == "throttled"
    assert post(CONTENT, f"Bearer {content_mcp.token}").status_code == 200  # reads: 4
    assert post(CONTENT, f"Bearer {content_mcp.token}").status_code == 200  # reads: 5
    assert post(CONTENT, f"Bearer {content_mcp.token}").status_code == 429
