"""The MCP search tools cap `query` at 500 characters like REST's `q` (SPEC §3.3)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_bridge.tests.conftest import Mcp, create

WORDS = " ".join(["kubernetes OR -deploy"] * 7000)


@pytest.mark.parametrize(
    ("server", "tool"), [("content", "search_items"), ("prompts", "search_prompts")]
)
@pytest.mark.parametrize("query", ["a" * 501, WORDS], ids=["501 chars", "20000 words"])
def test_search_tools_refuse_a_query_over_500_characters(
    content_mcp: Mcp, prompt_mcp: Mcp, server: str, tool: str, query: str
) -> None:
    mcp = content_mcp if server == "content" else prompt_mcp
    body = mcp.error(tool, query=query)
    assert body["error"] == "validation_error"
    assert "query" in body["fields"]


def test_search_items_accepts_a_query_of_exactly_500_characters(
    content_mcp: Mcp, mcp_owner: Any
) -> None:
    query = ("kubernetes " * 50)[:500]
    create(mcp_owner, "note", title="ops", content=query)
    assert content_mcp.ok("search_items", query=query)["total"] == 1
