"""What both servers declare (initialize, tools/list) and how the endpoint speaks HTTP/JSON-RPC."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import httpx
import pytest
from django.core.management import call_command
from mcp import ClientSession, types

from mcp_bridge.tests.conftest import CONTENT, PROMPTS, Mcp, create, http_client

CONTENT_TOOLS = [
    "search_items",
    "get_item",
    "search_in_content",
    "edit_content",
    "update_item",
    "create_bookmark",
    "create_note",
    "list_tags",
    "get_item_history",
    "get_item_version",
    "restore_item_version",
    "list_filters",
    "get_context",
    "create_relationship",
    "get_changes",
    "find_related",
]
PROMPT_TOOLS = [
    "search_prompts",
    "get_prompt_template",
    "get_prompt_metadata",
    "create_prompt",
    "edit_prompt_template",
    "update_prompt",
    "list_tags",
    "get_prompt_history",
    "get_prompt_version",
    "restore_prompt_version",
    "list_filters",
    "get_context",
]
READ_ONLY = {
    "search_items",
    "get_item",
    "search_in_content",
    "list_tags",
    "search_prompts",
    "get_prompt_template",
    "get_prompt_metadata",
    "get_item_history",
    "get_item_version",
    "get_prompt_history",
    "get_prompt_version",
    "list_filters",
    "get_context",
    "get_changes",
    "find_related",
}
RESTORES = {"restore_item_version", "restore_prompt_version"}
DESTRUCTIVE = {"edit_content", "update_item", "edit_prompt_template", "update_prompt", *RESTORES}
IDEMPOTENT = READ_ONLY | {"update_item", "update_prompt", "create_relationship", *RESTORES}


def _initialize(mcp: Mcp) -> types.InitializeResult:
    async def go() -> types.InitializeResult:
        async with http_client(mcp.token) as http:
            from mcp.client.streamable_http import streamable_http_client

            async with (
                streamable_http_client("http://testserver" + mcp.path, http_client=http) as (
                    r,
                    w,
                    _,
                ),
                ClientSession(r, w) as session,
            ):
                return await session.initialize()

    return asyncio.run(go())


def test_content_server_initializes_with_instructions_and_tools_only(content_mcp: Mcp) -> None:
    init = _initialize(content_mcp)
    assert init.serverInfo.name == "tiddly-content"
    assert init.capabilities.tools is not None
    assert init.capabilities.prompts is None
    assert init.capabilities.resources is not None  # SPEC §17.3, without subscriptions
    assert not init.capabilities.resources.subscribe
    text = init.instructions or ""
    for phrase in [*CONTENT_TOOLS, "FULL replacement", "expected_updated_at", "server_state"]:
        assert phrase in text


def test_prompt_server_initializes_with_prompts_and_tools(prompt_mcp: Mcp) -> None:
    init = _initialize(prompt_mcp)
    assert init.serverInfo.name == "tiddly-prompts"
    assert init.capabilities.prompts is not None
    assert init.capabilities.tools is not None
    assert init.capabilities.resources is not None
    assert not init.capabilities.resources.subscribe
    text = init.instructions or ""
    for phrase in ["Jinja2", "prompts/get", "FULL replacements", "expected_updated_at"]:
        assert phrase in text
    for tool in PROMPT_TOOLS:
        assert tool in text or tool == "list_tags"


@pytest.mark.parametrize(
    ("server", "names"), [("content", CONTENT_TOOLS), ("prompt", PROMPT_TOOLS)]
)
def test_tools_are_exactly_the_specified_ones_with_annotations(
    server: str, names: list[str], content_mcp: Mcp, prompt_mcp: Mcp
) -> None:
    mcp = content_mcp if server == "content" else prompt_mcp
    tools = mcp.run(lambda s: s.list_tools()).tools
    assert [t.name for t in tools] == names
    for tool in tools:
        hints = tool.annotations
        assert hints is not None
        assert hints.readOnlyHint is (tool.name in READ_ONLY), tool.name
        assert hints.destructiveHint is (tool.name in DESTRUCTIVE), tool.name
        assert hints.idempotentHint is (tool.name in IDEMPOTENT), tool.name
        assert hints.openWorldHint is False


@pytest.mark.parametrize("path", [CONTENT, PROMPTS])
def test_every_tool_and_parameter_is_described_for_a_model(path: str, owner_token: Any) -> None:
    tools = Mcp(path, owner_token[1]).run(lambda s: s.list_tools()).tools
    for tool in tools:
        assert tool.title
        assert len(tool.description or "") > 80, tool.name
        assert not {"delete", "archive", "trash"} & set(tool.name.split("_"))
        for name, schema in tool.inputSchema["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name}"
        assert tool.outputSchema is not None
        assert tool.outputSchema["type"] == "object"


def test_descriptions_teach_replacement_semantics_and_neighbours(
    content_mcp: Mcp, prompt_mcp: Mcp
) -> None:
    content = {t.name: t for t in content_mcp.run(lambda s: s.list_tools()).tools}
    prompts = {t.name: t for t in prompt_mcp.run(lambda s: s.list_tools()).tools}
    assert (
        "FULL REPLACEMENT"
        in content["update_item"].inputSchema["properties"]["tags"]["description"]
    )
    assert "edit_content" in (content["update_item"].description or "")
    assert "update_item" in (content["edit_content"].description or "")
    assert "search_items" in (content["search_in_content"].description or "")
    edit = prompts["edit_prompt_template"]
    assert "Example" in (edit.description or "")
    assert '"arguments": [{"name": "name"' in (edit.description or "")
    args = edit.inputSchema["properties"]["arguments"]["description"]
    assert "FULL REPLACEMENT" in args
    assert "Omit" in args
    update = prompts["update_prompt"].inputSchema["properties"]
    assert "FULL REPLACEMENT" in update["tags"]["description"]
    assert "FULL REPLACEMENT" in update["arguments"]["description"]


def test_there_is_no_server_instructions_tool(content_mcp: Mcp, prompt_mcp: Mcp) -> None:
    for mcp in (content_mcp, prompt_mcp):
        names = [t.name for t in mcp.run(lambda s: s.list_tools()).tools]
        assert "get_server_instructions" not in names


def test_output_schemas_match_the_results(content_mcp: Mcp, mcp_owner: Any) -> None:
    import jsonschema

    note = create(mcp_owner, "note", title="n", content="a\nb")
    schemas = {t.name: t.outputSchema for t in content_mcp.run(lambda s: s.list_tools()).tools}
    results = {
        "get_item": content_mcp.ok("get_item", id=str(note.pk), type="note"),
        "search_items": content_mcp.ok("search_items"),
        "search_in_content": content_mcp.ok(
            "search_in_content", id=str(note.pk), type="note", query="a"
        ),
    }
    for name, result in results.items():
        jsonschema.validate(result, schemas[name])
    bad = {**results["get_item"], "title": 3}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schemas["get_item"])


# --- JSON-RPC over HTTP -------------------------------------------------------------------------


def raw(token: str, body: Any, **headers: str) -> httpx.Response:
    sent = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    sent.update(headers)
    content = body if isinstance(body, bytes) else json.dumps(body).encode()

    async def go() -> httpx.Response:
        async with http_client(token) as http:
            return await http.post(CONTENT, content=content, headers=sent)

    return asyncio.run(go())


def rpc(method: str, params: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": method,
        **({"params": params} if params else {}),
        **extra,
    }


@pytest.fixture
def token(owner_token: Any) -> str:
    return str(owner_token[1])


def test_a_tool_call_needs_no_session_or_initialize(token: str) -> None:
    response = raw(token, rpc("tools/call", {"name": "list_tags", "arguments": {}}))
    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response.headers
    body = response.json()
    assert body["id"] == 7
    assert body["result"]["structuredContent"] == {"tags": []}
    assert body["result"]["isError"] is False


def test_ping_answers_an_empty_result(token: str) -> None:
    assert raw(token, rpc("ping")).json()["result"] == {}


def test_a_notification_is_accepted_without_a_body(token: str) -> None:
    response = raw(token, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert response.status_code == 202
    assert response.content == b""


def test_an_unknown_method_is_method_not_found(token: str) -> None:
    subscribe = rpc("resources/subscribe", {"uri": "tiddly://note/x"})  # no subscriptions
    assert raw(token, subscribe).json()["error"]["code"] == -32601


def test_an_accept_header_without_json_is_406(token: str) -> None:
    assert raw(token, rpc("ping"), Accept="text/html").status_code == 406


def test_a_non_json_content_type_is_415(token: str) -> None:
    assert raw(token, rpc("ping"), **{"Content-Type": "text/plain"}).status_code == 415


def test_an_unsupported_protocol_version_is_400(token: str) -> None:
    response = raw(token, rpc("ping"), **{"MCP-Protocol-Version": "1999-01-01"})
    assert response.status_code == 400


@pytest.mark.parametrize("body", [b"{not json", b'{"jsonrpc": "1.0", "id": 1}'])
def test_malformed_json_rpc_is_400(token: str, body: bytes) -> None:
    response = raw(token, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] in (-32700, -32600)


def test_unknown_protocol_version_in_initialize_gets_the_latest(token: str) -> None:
    params = {
        "protocolVersion": "1999-01-01",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    result = raw(token, rpc("initialize", params)).json()["result"]
    assert result["protocolVersion"] == types.LATEST_PROTOCOL_VERSION
    assert result["serverInfo"]["name"] == "tiddly-content"


# --- OpenAPI ------------------------------------------------------------------------------------


def test_the_mcp_endpoints_are_not_in_the_openapi_schema(transactional_db: None) -> None:
    out = io.StringIO()
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--format", "openapi-json", stdout=out
    )
    paths = json.loads(out.getvalue())["paths"]
    assert paths
    assert not [p for p in paths if p.startswith("/mcp")]
