"""MCP edit tools past TIDDLY_MAX_REPLACEMENTS (SPEC §4.3 Cost): an isError result, nothing changed."""

from __future__ import annotations

from typing import Any

from mcp_bridge.tests.conftest import Mcp, create


def test_mcp_edit_content_past_the_limit_is_a_tool_error(
    content_mcp: Mcp, mcp_owner: Any, settings: Any
) -> None:
    settings.TIDDLY_MAX_REPLACEMENTS = 10
    item = create(mcp_owner, "note", title="Many a", content="a" * 11)

    error = content_mcp.error(
        "edit_content", id=str(item.pk), type="note", old_str="a", new_str="b", replace_all=True
    )

    assert (error["error"], error["length"], error["limit"]) == ("field_limit_exceeded", 11, 10)
    assert type(item).objects.get(pk=item.pk).content == "a" * 11
