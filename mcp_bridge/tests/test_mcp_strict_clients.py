"""Errors survive strict clients (SPEC §7 "Interoperability").

A client like the MCP Inspector validates ``structuredContent`` against the tool's
``outputSchema`` even on ``isError`` results: every schema must admit the §3.4 error object as
well as the success object. Unknown JSON-RPC methods are ``-32601``; text arguments holding NUL
or a lone surrogate are a ``validation_error`` (not a server error), through the official client
and as raw JSON-RPC (a lone surrogate cannot even be sent by the SDK client: it is raw JSON).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import jsonschema
import pytest
from mcp import types

from content.models import Note
from mcp_bridge.tests.conftest import CONTENT, PROMPTS, Mcp, create, http_client
from mcp_bridge.tests.test_mcp_protocol import raw, rpc

MARK = "@lone@"
SURROGATE = f"café {MARK} end"  # MARK becomes a lone high surrogate in the JSON text


def lone_surrogate_json(payload: Any) -> bytes:
    """``payload`` as JSON with every MARK written as ``\\ud800`` (no encoder writes that)."""
    return json.dumps(payload).replace(MARK, "\\ud800").encode()


def _schemas(mcp: Mcp) -> dict[str, dict[str, Any]]:
    return {t.name: t.outputSchema for t in mcp.run(lambda s: s.list_tools()).tools}  # type: ignore[misc]


def test_every_output_schema_is_an_object_admitting_success_and_error(
    content_mcp: Mcp, prompt_mcp: Mcp
) -> None:
    error = {"error": "no_match", "message": "The specified text was not found.", "extra": 1}
    schemas = {**_schemas(content_mcp), **_schemas(prompt_mcp)}
    for name, schema in schemas.items():
        assert schema["type"] == "object", name
        assert len(schema["anyOf"]) == 2, name
        jsonschema.Draft7Validator.check_schema(schema)
        jsonschema.validate(error, schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"error": "no_match"}, schema)  # neither success nor error


def test_every_failing_tool_result_validates_against_its_output_schema(
    content_mcp: Mcp, prompt_mcp: Mcp, mcp_owner: Any
) -> None:
    note = create(mcp_owner, "note", title="n", content="one\ntwo\none\n")
    create(mcp_owner, "prompt", name="p", content="hi")
    failures = [
        (
            content_mcp,
            {
                "edit_content": {
                    "id": str(note.pk),
                    "type": "note",
                    "old_str": "zzz",
                    "new_str": "x",
                },
                "update_item": {
                    "id": str(note.pk),
                    "type": "note",
                    "title": "t",
                    "expected_updated_at": "2000-01-01T00:00:00Z",
                },
            },
        ),
        (
            prompt_mcp,
            {
                "edit_prompt_template": {"name": "p", "old_str": "zzz", "new_str": "x"},
                "update_prompt": {
                    "name": "p",
                    "title": "t",
                    "expected_updated_at": "2000-01-01T00:00:00Z",
                },
            },
        ),
    ]
    for mcp, special in failures:
        for name, schema in _schemas(mcp).items():
            # Every tool fails on a bad argument; some also get a domain error with details.
            cases = [{"no_such_argument": 1}, *([special[name]] if name in special else [])]
            for arguments in cases:
                result = mcp.call(name, **arguments)
                assert result.isError, (name, arguments)
                jsonschema.validate(result.structuredContent, schema)
    conflict = content_mcp.error("update_item", **failures[0][1]["update_item"])
    assert conflict["error"] == "conflict"
    assert conflict["server_state"]["id"] == str(note.pk)


def test_a_multiple_matches_error_keeps_its_matches_for_a_strict_client(
    content_mcp: Mcp, mcp_owner: Any
) -> None:
    note = create(mcp_owner, "note", title="n", content="one\ntwo\none\n")
    schema = _schemas(content_mcp)["edit_content"]
    result = content_mcp.call(
        "edit_content", id=str(note.pk), type="note", old_str="one", new_str="1"
    )
    jsonschema.validate(result.structuredContent, schema)
    assert result.structuredContent["error"] == "multiple_matches"  # type: ignore[index]
    assert [m["line"] for m in result.structuredContent["matches"]] == [1, 3]  # type: ignore[index]


# --- JSON-RPC methods ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["foo/bar", "tools/delete", "roots/list"])
def test_an_unknown_or_unoffered_method_is_32601(owner_token: Any, method: str) -> None:
    body = raw(owner_token[1], rpc(method, {"x": 1})).json()
    assert body["error"]["code"] == types.METHOD_NOT_FOUND
    assert body["id"] == 7


# --- NUL and lone surrogates --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("create_note", {"title": "a\x00b"}, "title"),
        ("create_note", {"title": "ok", "content": "x\x00"}, "content"),
        ("create_note", {"title": "ok", "tags": ["a\x00"]}, "tags.0"),
        ("create_bookmark", {"url": "https://e.example/\x00"}, "url"),
        ("search_items", {"query": "\x00"}, "query"),
    ],
)
def test_nul_in_a_text_argument_is_a_validation_error(
    content_mcp: Mcp, mcp_owner: Any, tool: str, arguments: dict[str, Any], field: str
) -> None:
    body = content_mcp.error(tool, **arguments)
    assert body["error"] == "validation_error"
    assert field in body["fields"]
    assert not Note.objects.filter(owner=mcp_owner).exists()


def test_nul_in_a_prompt_argument_list_is_a_validation_error(prompt_mcp: Mcp) -> None:
    body = prompt_mcp.error(
        "create_prompt",
        name="p",
        content="{{ x }}",
        arguments=[{"name": "x", "description": "\x00"}],
    )
    assert body["error"] == "validation_error"
    assert "arguments.0.description" in body["fields"]


def _post(token: str, path: str, body: bytes) -> httpx.Response:
    async def go() -> Any:
        async with http_client(token) as http:
            return await http.post(
                path,
                content=body,
                headers={
                    "Accept": "application/json, text/event-stream",
                    "Content-Type": "application/json",
                },
            )

    response = asyncio.run(go())
    assert response.status_code == 200, response.content
    return response


@pytest.mark.parametrize(
    ("path", "tool", "arguments", "field"),
    [
        (CONTENT, "create_note", {"title": SURROGATE}, "title"),
        (CONTENT, "create_note", {"title": "ok", "description": SURROGATE}, "description"),
        (CONTENT, "search_items", {"query": SURROGATE}, "query"),
        (PROMPTS, "create_prompt", {"name": "p", "content": SURROGATE}, "content"),
        (PROMPTS, "get_prompt_template", {"name": SURROGATE}, "name"),
        (CONTENT, "create_note", {"title": "ok", MARK: 1}, "\\ud800"),
    ],
)
def test_a_lone_surrogate_in_a_text_argument_is_a_validation_error(
    owner_token: Any, mcp_owner: Any, path: str, tool: str, arguments: Any, field: str
) -> None:
    message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
    body = lone_surrogate_json({**message, "params": {"name": tool, "arguments": arguments}})
    result = _post(owner_token[1], path, body).json()["result"]
    assert result["isError"] is True
    body = result["structuredContent"]
    assert body["error"] == "validation_error", body
    assert field in body["fields"], body
    assert not Note.objects.filter(owner=mcp_owner).exists()


def test_a_lone_surrogate_in_prompts_get_is_an_invalid_params_error(
    owner_token: Any, mcp_owner: Any
) -> None:
    create(
        mcp_owner,
        "prompt",
        name="greet",
        content="Hello {{ who }}",
        arguments=[{"name": "who", "required": True}],
    )
    params = {"name": "greet", "arguments": {"who": SURROGATE}}
    body = lone_surrogate_json(
        {"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": params}
    )
    error = _post(owner_token[1], PROMPTS, body).json()["error"]
    assert error["code"] == types.INVALID_PARAMS
    assert error["data"]["error"] == "validation_error"
    assert "arguments.who" in error["data"]["fields"]


def test_nul_in_a_prompts_get_value_is_rendered_as_on_rest(prompt_mcp: Mcp, mcp_owner: Any) -> None:
    create(
        mcp_owner,
        "prompt",
        name="greet",
        content="Hello {{ who }}!",
        arguments=[{"name": "who", "required": True}],
    )
    result = prompt_mcp.run(lambda s: s.get_prompt("greet", {"who": "a\x00b"}))
    assert result.messages[0].content.text == "Hello a\x00b!"  # type: ignore[union-attr]
