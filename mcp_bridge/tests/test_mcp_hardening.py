"""Issue 22's MCP items (SPEC §7 Interoperability), through raw HTTP to the ASGI application.

- A request whose ``id`` cannot be encoded (a lone surrogate) is refused with ``"id": null``
  before anything runs: a client's retry must not create a duplicate.
- Errors the transport produces before it has a request id carry ``"id": null``.
- A throttled tool call is an ``isError`` ``throttled`` result with ``retry_after``.
- ``prompts/list`` gives every prompt a description.
- ``initialize`` with an unknown protocol version gets the newest supported one.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from mcp import types

from content.models import Note
from mcp_bridge.tests.conftest import CONTENT, PROMPTS, create, http_client
from prompts.models import Prompt

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def post(path: str, token: str, body: bytes, **headers: str) -> httpx.Response:
    async def go() -> httpx.Response:
        async with http_client(token) as http:
            return await http.post(path, content=body, headers={**HEADERS, **headers})

    return asyncio.run(go())


def call_body(name: str, arguments: dict[str, Any], raw_id: str = "7") -> bytes:
    """A tools/call whose ``id`` is written as raw JSON (so it can hold ``"\\ud800"``)."""
    params = json.dumps({"name": name, "arguments": arguments})
    return (
        f'{{"jsonrpc": "2.0", "id": {raw_id}, "method": "tools/call", "params": {params}}}'.encode()
    )


@pytest.fixture
def token(owner_token: Any) -> str:
    return str(owner_token[1])


# --- undecodable ids ----------------------------------------------------------------------------


@pytest.mark.parametrize("raw_id", ['"\\ud800"', '"a\\udfffb"'])
def test_a_lone_surrogate_id_is_refused_and_the_note_not_created(
    token: str, mcp_owner: Any, raw_id: str
) -> None:
    response = post(CONTENT, token, call_body("create_note", {"title": "twice?"}, raw_id))
    assert response.status_code == 400
    body = response.json()
    assert body["id"] is None
    assert body["error"]["code"] == types.INVALID_REQUEST
    assert "id" in body["error"]["message"]
    assert not Note.objects.filter(owner=mcp_owner).exists()


def test_a_lone_surrogate_id_on_the_prompt_server_creates_no_prompt(
    token: str, mcp_owner: Any
) -> None:
    arguments = {"name": "twice", "content": "Hello"}
    response = post(PROMPTS, token, call_body("create_prompt", arguments, '"\\ud800"'))
    assert response.status_code == 400
    assert response.json()["id"] is None
    assert not Prompt.objects.filter(owner=mcp_owner).exists()


def test_a_surrogate_id_on_any_method_is_refused_with_a_null_id(token: str) -> None:
    body = b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}'
    response = post(CONTENT, token, body)
    assert response.status_code == 400
    assert response.json()["id"] is None


def test_a_valid_id_still_runs_the_tool(token: str, mcp_owner: Any) -> None:
    response = post(CONTENT, token, call_body("create_note", {"title": "once"}, '"req-\\u00e9"'))
    assert response.status_code == 200
    assert response.json()["id"] == "req-é"
    assert Note.objects.filter(owner=mcp_owner, title="once").count() == 1


# --- id null on transport errors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (b"{not json", {}, 400),
        (b"[1, 2]", {}, 400),
        (b'{"jsonrpc": "2.0", "method": "ping", "id": 1}', {"Accept": "text/html"}, 406),
        (b'{"jsonrpc": "2.0", "method": "ping", "id": 1}', {"Content-Type": "text/plain"}, 415),
        (b'{"jsonrpc": "2.0", "method": "ping", "id": 1}', {"MCP-Protocol-Version": "1999"}, 400),
    ],
)
def test_transport_errors_carry_a_null_id(
    token: str, body: bytes, headers: dict[str, str], status: int
) -> None:
    response = post(CONTENT, token, body, **headers)
    assert response.status_code == status
    answer = response.json()
    assert answer["jsonrpc"] == "2.0"
    assert "id" in answer
    assert answer["id"] is None
    assert isinstance(answer["error"]["code"], int)


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
        "DEFAULT_THROTTLE_RATES": {"read": "100/min", "write": "1/min"},
    }
    cache.clear()


def test_a_throttled_tool_call_is_an_is_error_result_with_retry_after(
    throttled: None, token: str, mcp_owner: Any
) -> None:
    first = post(CONTENT, token, call_body("create_note", {"title": "first"}))
    assert first.json()["result"]["isError"] is False
    second = post(CONTENT, token, call_body("create_note", {"title": "second"}))
    assert second.status_code == 200
    result = second.json()["result"]
    assert second.json()["id"] == 7
    assert result["isError"] is True
    error = result["structuredContent"]
    assert error["error"] == "throttled"
    assert isinstance(error["retry_after"], int)
    assert 1 <= error["retry_after"] <= 60
    assert str(error["retry_after"]) in error["message"]
    assert json.loads(result["content"][0]["text"]) == error
    assert list(Note.objects.filter(owner=mcp_owner).values_list("title", flat=True)) == ["first"]


# --- prompts/list -------------------------------------------------------------------------------


def test_prompts_list_gives_every_prompt_a_description(token: str, mcp_owner: Any) -> None:
    create(mcp_owner, "prompt", name="described", content="x", description="What it does")
    create(mcp_owner, "prompt", name="titled", content="x", title="A title")
    create(mcp_owner, "prompt", name="bare", content="x")
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "prompts/list"}'
    prompts = post(PROMPTS, token, body).json()["result"]["prompts"]
    described = {p["name"]: p["description"] for p in prompts}
    assert described == {"described": "What it does", "titled": "A title", "bare": "bare"}


# --- initialize ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [CONTENT, PROMPTS])
def test_initialize_with_an_unknown_version_gets_the_newest_supported(
    token: str, path: str
) -> None:
    params = {
        "protocolVersion": "2099-01-01",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    # A client may already send the version it hopes for as the header.
    response = post(path, token, body.encode(), **{"MCP-Protocol-Version": "2099-01-01"})
    assert response.status_code == 200
    assert response.json()["result"]["protocolVersion"] == types.LATEST_PROTOCOL_VERSION


# --- large answers --------------------------------------------------------------------------------


def test_a_large_mcp_answer_is_collected_once_sent(
    mcp_owner: Any, owner_token: Any, monkeypatch: Any
) -> None:
    """Django's ASGI handler leaves each response in a reference cycle; a 12 MB get_item answer
    stayed resident until the next automatic collection. After an answer of 1 MB or more the
    middleware collects, as for the REST API; a small answer costs no collection."""
    from django.test import Client

    from tiddly import middleware

    collections: list[int] = []
    monkeypatch.setattr(middleware.gc, "collect", lambda: collections.append(1))
    note = create(mcp_owner, "note", title="long", content="a line of text\n" * 80_000)
    headers = {"Authorization": f"Bearer {owner_token[1]}", "Accept": "application/json"}
    client = Client()
    small = client.post(
        CONTENT, call_body("list_tags", {}), content_type="application/json", headers=headers
    )
    assert small.status_code == 200
    small.close()
    assert collections == []
    large = client.post(
        CONTENT,
        call_body("get_item", {"id": str(note.id), "type": "note"}),
        content_type="application/json",
        headers=headers,
    )
    assert large.status_code == 200
    assert len(large.content) > 1_000_000
    large.close()
    assert collections == [1]
