"""MCP content tool get_changes (SPEC §17.1): the feed over MCP, bookmarks and notes only."""

from __future__ import annotations

from typing import Any

from content.tests.changes_support import wait_until_settled
from mcp_bridge.tests.conftest import Mcp, create


def test_get_changes_pages_the_feed_of_bookmarks_and_notes(
    content_mcp: Mcp, other_content_mcp: Mcp, mcp_owner: Any, mcp_other: Any
) -> None:
    note = create(mcp_owner, "note", title="One")
    create(mcp_owner, "prompt", name="p1", content="x")
    bookmark = create(mcp_owner, "bookmark", url="https://example.com/")
    create(mcp_other, "note", title="Theirs")
    wait_until_settled()
    first = content_mcp.ok("get_changes", limit=1)
    assert [c["id"] for c in first["changes"]] == [str(note.pk)]
    assert first["has_more"] is True
    rest = content_mcp.ok("get_changes", since=first["next_cursor"])
    assert [(c["type"], c["action"]) for c in rest["changes"]] == [("bookmark", "created")]
    assert rest["changes"][0]["id"] == str(bookmark.pk)
    assert rest["has_more"] is False
    assert content_mcp.ok("get_changes", since=rest["next_cursor"])["changes"] == []
    foreign = other_content_mcp.ok("get_changes")["next_cursor"]
    error = content_mcp.error("get_changes", since=foreign)
    assert error["error"] == "validation_error"
    assert "since" in error["fields"]
