"""Scopes on the MCP servers (SPEC §7, §8.1): every tool of both servers, every combination.

A tool annotated ``readOnlyHint`` needs ``<area>:read`` of its server (content or prompts), any
other ``<area>:write``; ``tools/list`` shows only the tools a token may call, and calling another
one anyway is ``isError`` ``forbidden`` naming the scope. The prompts capability needs
``prompts:read``. Every call below goes through the official SDK client.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from mcp import types
from mcp.shared.exceptions import McpError

from mcp_bridge.tests.conftest import CONTENT, PROMPTS, Mcp, create
from tiddly.models import ApiToken
from tiddly.scopes import ALL_SCOPES

COMBINATIONS = [
    frozenset(c) for n in range(len(ALL_SCOPES) + 1) for c in itertools.combinations(ALL_SCOPES, n)
]
SERVERS = {CONTENT: "content", PROMPTS: "prompts"}
# Pinned here so that a changed annotation (which changes the scope a tool needs) is noticed.
READ_TOOLS = {
    "search_items",
    "get_item",
    "search_in_content",
    "list_tags",
    "search_prompts",
    "get_prompt_template",
    "get_prompt_metadata",
}
WRITE_TOOLS = {
    "edit_content",
    "update_item",
    "create_bookmark",
    "create_note",
    "create_prompt",
    "edit_prompt_template",
    "update_prompt",
}


def _mcp(owner: Any, path: str, scopes: frozenset[str]) -> Mcp:
    _, plaintext = ApiToken.issue(owner=owner, name="scoped", scopes=" ".join(sorted(scopes)))
    return Mcp(path, plaintext)


def _all_tools(owner: Any, path: str) -> list[types.Tool]:
    return _mcp(owner, path, frozenset(ALL_SCOPES)).run(lambda s: s.list_tools()).tools


def _needed(tool: types.Tool, area: str) -> str:
    read_only = tool.annotations is not None and tool.annotations.readOnlyHint
    return f"{area}:{'read' if read_only else 'write'}"


def test_the_read_tools_are_the_ones_annotated_read_only(mcp_owner: Any) -> None:
    for path in SERVERS:
        for tool in _all_tools(mcp_owner, path):
            assert tool.annotations is not None, tool.name
            if tool.name in READ_TOOLS:
                assert tool.annotations.readOnlyHint is True, tool.name
            elif tool.name in WRITE_TOOLS:
                assert tool.annotations.readOnlyHint is False, tool.name


@pytest.mark.parametrize("path", list(SERVERS))
def test_each_scope_combination_lists_and_calls_exactly_the_tools_it_allows(
    mcp_owner: Any, path: str
) -> None:
    area = SERVERS[path]
    tools = _all_tools(mcp_owner, path)
    assert tools
    for held in COMBINATIONS:
        allowed = {t.name for t in tools if _needed(t, area) in held}

        async def work(session: Any) -> tuple[set[str], dict[str, types.CallToolResult]]:
            listed = {t.name for t in (await session.list_tools()).tools}
            # No arguments: an allowed tool then fails validation (or lists), never forbidden.
            calls = {t.name: await session.call_tool(t.name, {}) for t in tools}
            return listed, calls

        listed, calls = _mcp(mcp_owner, path, held).run(work)
        assert listed == allowed, (path, sorted(held))
        for tool in tools:
            result = calls[tool.name]
            body = result.structuredContent or {}
            if tool.name in allowed:
                assert body.get("error") != "forbidden", (tool.name, sorted(held), body)
            else:
                assert result.isError, (tool.name, sorted(held))
                assert body["error"] == "forbidden", (tool.name, sorted(held), body)
                assert f"'{_needed(tool, area)}'" in body["message"]


def test_a_read_only_token_reads_but_a_write_is_forbidden_and_changes_nothing(
    mcp_owner: Any,
) -> None:
    note = create(mcp_owner, "note", title="n", content="alpha\n")
    reader = _mcp(mcp_owner, CONTENT, frozenset({"content:read"}))
    assert reader.ok("get_item", id=str(note.pk), type="note")["content"] == "alpha\n"
    body = reader.error("edit_content", id=str(note.pk), type="note", old_str="alpha", new_str="b")
    assert body["error"] == "forbidden"
    assert "'content:write'" in body["message"]
    note.refresh_from_db()
    assert note.content == "alpha\n"


def test_list_tags_counts_only_the_areas_the_token_may_read(mcp_owner: Any) -> None:
    create(mcp_owner, "note", title="n", tags=["shared"])
    create(mcp_owner, "prompt", name="p", content="x", tags=["shared"])
    content_only = _mcp(mcp_owner, CONTENT, frozenset({"content:read"}))
    assert content_only.ok("list_tags") == {"tags": [{"name": "shared", "count": 1}]}
    both = _mcp(mcp_owner, CONTENT, frozenset({"content:read", "prompts:read"}))
    assert both.ok("list_tags") == {"tags": [{"name": "shared", "count": 2}]}


@pytest.mark.parametrize(
    ("scopes", "allowed"),
    [
        ({"prompts:read"}, True),
        ({"prompts:read", "prompts:write"}, True),
        ({"prompts:write"}, False),
        ({"content:read", "content:write"}, False),
        (set(), False),
    ],
)
def test_the_prompts_capability_needs_prompts_read(
    mcp_owner: Any, scopes: set[str], allowed: bool
) -> None:
    create(
        mcp_owner,
        "prompt",
        name="greet",
        content="Hello {{ who }}",
        arguments=[{"name": "who", "required": True}],
    )
    server = _mcp(mcp_owner, PROMPTS, frozenset(scopes))
    for request in (
        lambda s: s.list_prompts(),
        lambda s: s.get_prompt("greet", {"who": "you"}),
    ):
        if allowed:
            assert server.run(request) is not None
            continue
        with pytest.raises(McpError) as raised:
            server.run(request)
        assert raised.value.error.data["error"] == "forbidden"
        assert "'prompts:read'" in raised.value.error.data["message"]
