"""Driving both MCP servers through the official MCP SDK client over streamable HTTP.

The client talks to the real ASGI application (``tiddly.asgi.application``) through
``httpx.ASGITransport``: Django's URL routing, middleware, the DRF view with Bearer auth, the MCP
view and the tools all run as in production, with no socket. Django runs the sync view in a
worker thread with its own database connection, so these tests need ``transactional_db``.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import pytest
import uvicorn
from django.contrib.auth import get_user_model
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from tiddly.asgi import application
from tiddly.models import ApiToken

BASE = "http://testserver"
CONTENT = "/mcp/content"
PROMPTS = "/mcp/prompts"
T = TypeVar("T")


def http_client(token: str | None, **headers: str) -> httpx.AsyncClient:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application), base_url=BASE, headers=headers
    )


@asynccontextmanager
async def mcp_session(path: str, token: str | None) -> AsyncIterator[ClientSession]:
    """An initialized official-SDK client session on one of the two servers."""
    async with (
        http_client(token) as http,
        streamable_http_client(BASE + path, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@dataclass
class Mcp:
    """A sync facade over an MCP server for one user: each call is a fresh client session."""

    path: str
    token: str

    def run(self, work: Callable[[ClientSession], Awaitable[T]]) -> T:
        async def go() -> T:
            async with mcp_session(self.path, self.token) as session:
                return await work(session)

        try:
            return asyncio.run(go())
        except BaseExceptionGroup as group:  # the client's task groups wrap what it raises
            raise _single(group) from None

    def call(self, tool: str, **arguments: Any) -> types.CallToolResult:
        return self.run(lambda s: s.call_tool(tool, arguments))

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """Call a tool that must succeed; checks text and structuredContent agree."""
        result = self.call(tool, **arguments)
        assert not result.isError, result.content[0].text  # type: ignore[union-attr]
        assert result.structuredContent is not None
        assert json.loads(result.content[0].text) == result.structuredContent  # type: ignore[union-attr]
        return result.structuredContent

    def error(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """Call a tool that must fail; checks text and structuredContent carry the same object."""
        result = self.call(tool, **arguments)
        assert result.isError
        body = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert body == result.structuredContent
        assert set(body) >= {"error", "message"}
        assert "Traceback" not in result.content[0].text  # type: ignore[union-attr]
        return body


def _single(group: BaseExceptionGroup) -> BaseException:
    while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
        group = group.exceptions[0]  # type: ignore[assignment]
    return group


def _user(username: str) -> Any:
    return get_user_model().objects.create_user(username=username, password="pw-" + username)


@pytest.fixture
def mcp_owner(transactional_db: None) -> Any:
    return _user("mcp-owner")


@pytest.fixture
def mcp_other(transactional_db: None) -> Any:
    """A stranger whose items must stay invisible to ``mcp_owner``."""
    return _user("mcp-other")


@pytest.fixture
def owner_token(mcp_owner: Any) -> tuple[ApiToken, str]:
    return ApiToken.issue(owner=mcp_owner, name="agent")


@pytest.fixture
def content_mcp(owner_token: tuple[ApiToken, str]) -> Mcp:
    return Mcp(CONTENT, owner_token[1])


@pytest.fixture
def prompt_mcp(owner_token: tuple[ApiToken, str]) -> Mcp:
    return Mcp(PROMPTS, owner_token[1])


@pytest.fixture
def other_content_mcp(mcp_other: Any) -> Mcp:
    return Mcp(CONTENT, ApiToken.issue(owner=mcp_other, name="agent")[1])


@pytest.fixture
def other_prompt_mcp(mcp_other: Any) -> Mcp:
    return Mcp(PROMPTS, ApiToken.issue(owner=mcp_other, name="agent")[1])


# --- data, made through the services (as REST and the admin would) ------------------------------


def create(owner: Any, kind: str, **data: Any) -> Any:
    from content.history import Actor
    from content.item_types import model_for
    from content.services import create_item

    return create_item(owner=owner, model=model_for(kind), data=data, actor=Actor(source="test"))


@pytest.fixture
def api_for(transactional_db: None) -> Any:
    """A REST client for a user (to compare MCP results with REST responses)."""
    from rest_framework.test import APIClient

    def make(user: Any) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(owner=user, name='r')[1]}")
        return client

    return make


@pytest.fixture
def live_server_url(transactional_db: None, settings: Any) -> Iterator[str]:
    """uvicorn serving the ASGI app in a thread (the SSE GET freeze only shows on a real server)."""
    settings.ALLOWED_HOSTS = ["127.0.0.1", "testserver"]
    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=0, lifespan="off", log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
