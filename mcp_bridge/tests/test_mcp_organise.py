"""list_filters, filter_id, get_context and create_relationship on both MCP servers (SPEC §7)."""

from __future__ import annotations

from typing import Any

import pytest

from content.models import Relationship
from content.services.filters import create_filter
from mcp_bridge.tests.conftest import Mcp, create


def make_filter(owner: Any, name: str, types: list[str], groups: list[list[str]]) -> Any:
    expression = {"groups": [{"tags": g} for g in groups]}
    return create_filter(
        owner=owner, data={"name": name, "content_types": types, "expression": expression}
    )


@pytest.fixture
def organised(mcp_owner: Any, mcp_other: Any) -> dict[str, Any]:
    items = {
        "note": create(mcp_owner, "note", title="Work note", tags=["work", "client-a"]),
        "bookmark": create(mcp_owner, "bookmark", url="https://example.com/", tags=["urgent"]),
        "prompt": create(mcp_owner, "prompt", name="triage", content="Go", tags=["urgent"]),
        "stranger": create(mcp_other, "note", title="Their note", tags=["work"]),
    }
    items["content_filter"] = make_filter(
        mcp_owner, "Hot", ["note", "bookmark"], [["work", "client-a"], ["urgent"]]
    )
    items["prompt_filter"] = make_filter(mcp_owner, "Prompts", ["prompt"], [["urgent"]])
    items["their_filter"] = make_filter(mcp_other, "Theirs", ["note", "prompt"], [])
    return items


def test_list_filters_shows_only_the_servers_types(
    content_mcp: Mcp, prompt_mcp: Mcp, organised: dict[str, Any]
) -> None:
    content = content_mcp.ok("list_filters")["filters"]
    assert [f["name"] for f in content] == ["Hot"]
    assert content[0]["expression"]["groups"] == [
        {"tags": ["work", "client-a"]},
        {"tags": ["urgent"]},
    ]
    assert [f["name"] for f in prompt_mcp.ok("list_filters")["filters"]] == ["Prompts"]


def test_search_with_filter_id_ors_groups_and_ands_parameters(
    content_mcp: Mcp, prompt_mcp: Mcp, organised: dict[str, Any]
) -> None:
    fid = str(organised["content_filter"].pk)
    found = content_mcp.ok("search_items", filter_id=fid)
    assert {i["id"] for i in found["items"]} == {
        str(organised["note"].pk),
        str(organised["bookmark"].pk),
    }
    only_notes = content_mcp.ok("search_items", filter_id=fid, type="note")
    assert [i["id"] for i in only_notes["items"]] == [str(organised["note"].pk)]
    pid = str(organised["prompt_filter"].pk)
    assert [i["name"] for i in prompt_mcp.ok("search_prompts", filter_id=pid)["items"]] == [
        "triage"
    ]
    assert prompt_mcp.ok("search_prompts", filter_id=fid)["total"] == 0  # excludes prompts


def test_a_strangers_filter_is_not_found(
    content_mcp: Mcp, prompt_mcp: Mcp, organised: dict[str, Any]
) -> None:
    fid = str(organised["their_filter"].pk)
    assert content_mcp.error("search_items", filter_id=fid)["error"] == "not_found"
    assert prompt_mcp.error("search_prompts", filter_id=fid)["error"] == "not_found"
    assert content_mcp.error("search_items", filter_id="nope")["error"] == "not_found"


def test_get_context_is_scoped_and_every_item_line_is_actionable(
    content_mcp: Mcp, prompt_mcp: Mcp, organised: dict[str, Any]
) -> None:
    result = content_mcp.ok("get_context")
    text = result["markdown"]
    assert result["counts"] == {"bookmark": 1, "note": 1}
    assert f"- note {organised['note'].pk} — Work note" in text
    # An untitled bookmark is named as everywhere else (Item.display_title): host and path.
    assert f"- bookmark {organised['bookmark'].pk} — example.com\n" in text
    assert f"filter_id {organised['content_filter'].pk}" in text
    assert "triage" not in text
    assert "Their note" not in text
    assert "Theirs" not in text
    result = prompt_mcp.ok("get_context", limit=3)
    assert result["counts"] == {"prompt": 1}
    assert "- prompt `triage` — triage" in result["markdown"]
    assert "Work note" not in result["markdown"]


def test_get_context_of_an_empty_account(content_mcp: Mcp, prompt_mcp: Mcp) -> None:
    for mcp in (content_mcp, prompt_mcp):
        result = mcp.ok("get_context")
        assert "(no items)" in result["markdown"]
        assert set(result["counts"].values()) == {0}
    assert content_mcp.error("get_context", limit=0)["error"] == "validation_error"


def test_create_relationship_is_idempotent_and_shows_on_get_item(
    content_mcp: Mcp, organised: dict[str, Any]
) -> None:
    note, bookmark = organised["note"], organised["bookmark"]
    args = {
        "source_type": "note",
        "source_id": str(note.pk),
        "target_type": "bookmark",
        "target_id": str(bookmark.pk),
        "description": "about it",
    }
    link = content_mcp.ok("create_relationship", **args)
    again = content_mcp.ok(
        "create_relationship",
        source_type="bookmark",
        source_id=str(bookmark.pk),
        target_type="note",
        target_id=str(note.pk),
    )
    assert again == link
    rels = content_mcp.ok("get_item", id=str(note.pk), type="note")["relationships"]
    assert rels == [
        {
            "relationship_id": link["id"],
            "type": "bookmark",
            "id": str(bookmark.pk),
            "title": "example.com",  # untitled: the display title is the URL's host (SPEC §9)
            "description": "about it",
        }
    ]
    meta = content_mcp.ok("get_item", id=str(bookmark.pk), type="bookmark", include_content=False)
    assert meta["relationships"][0]["id"] == str(note.pk)


def test_create_relationship_refuses_strangers_and_self_links(
    content_mcp: Mcp, organised: dict[str, Any]
) -> None:
    note, theirs = organised["note"], organised["stranger"]
    mine = {"source_type": "note", "source_id": str(note.pk), "target_type": "note"}
    assert (
        content_mcp.error("create_relationship", **mine, target_id=str(theirs.pk))["error"]
        == "not_found"
    )
    assert (
        content_mcp.error("create_relationship", **mine, target_id=str(note.pk))["error"]
        == "validation_error"
    )
    assert Relationship.objects.count() == 0
