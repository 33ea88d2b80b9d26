"""The MCP doors answer what a client expects (issue 29): a trailing slash reaches the same
server, and a 401 says where to get a token."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.test import Client

from mcp_bridge.tests.conftest import Mcp, http_client
from tiddly.models import ApiToken

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@pytest.mark.parametrize(
    ("path", "tool"), [("/mcp/content/", "create_note"), ("/mcp/prompts/", "create_prompt")]
)
def test_a_trailing_slash_reaches_the_same_server(
    owner_token: tuple[ApiToken, str], path: str, tool: str
) -> None:
    tools = Mcp(path, owner_token[1]).run(lambda s: s.list_tools())
    assert tool in {t.name for t in tools.tools}


@pytest.mark.parametrize("path", ["/mcp/content/", "/mcp/prompts/"])
def test_a_trailing_slash_without_a_token_is_a_json_401_not_an_html_404(
    path: str, mcp_owner: Any
) -> None:
    async def post() -> Any:
        async with http_client(None, Accept="application/json, text/event-stream") as http:
            return await http.post(path, json=INITIALIZE)

    response = asyncio.run(post())
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "/account/tokens/" in response.json()["message"]


@pytest.mark.django_db
@pytest.mark.parametrize("authorization", [None, "Bearer tdly_not-a-real-token"])
def test_a_rest_401_says_where_to_get_a_token(authorization: str | None) -> None:
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    response = Client().get("/api/notes/", **headers)
    assert response.status_code == 401
    body = response.json()
    assert body["error"] == ("invalid_token" if authorization else "not_authenticated")
    assert "/account/tokens/" in body["message"]
