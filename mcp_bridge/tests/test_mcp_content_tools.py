"""The Content server's tools through the official MCP client: results, errors, history."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from content.history import Actor
from content.models import Bookmark, ItemVersion, Note
from content.services import ItemRef, archive_item, trash_item
from mcp_bridge.tests.conftest import Mcp, create

TEXT = "alpha\nbeta\ngamma\ndelta\nbeta again\nomega"


@pytest.fixture
def note(mcp_owner: Any) -> Any:
    return create(mcp_owner, "note", title="Plans", content=TEXT, tags=["work"])


@pytest.fixture
def bookmark(mcp_owner: Any) -> Any:
    return create(
        mcp_owner, "bookmark", url="https://example.com/a", title="Example", content="saved text"
    )


# --- search_items -------------------------------------------------------------------------------


def test_search_items_lists_bookmarks_and_notes_without_content(
    content_mcp: Mcp, note: Any, bookmark: Any, mcp_owner: Any
) -> None:
    create(mcp_owner, "prompt", name="not-content", content="Hi")
    page = content_mcp.ok("search_items")
    assert page["total"] == 2
    assert page["has_more"] is False
    assert {i["type"] for i in page["items"]} == {"note", "bookmark"}
    listed = next(i for i in page["items"] if i["type"] == "note")
    assert "content" not in listed
    assert listed["content_length"] == len(TEXT)
    assert listed["content_preview"] == " ".join(TEXT.split())
    assert listed["tags"] == ["work"]


def test_search_items_filters_by_query_type_and_tags(
    content_mcp: Mcp, note: Any, bookmark: Any, mcp_owner: Any
) -> None:
    create(mcp_owner, "note", title="Other", content="nothing here", tags=["home"])
    assert [i["id"] for i in content_mcp.ok("search_items", query="gamma")["items"]] == [
        str(note.pk)
    ]
    only_bookmarks = content_mcp.ok("search_items", type="bookmark")["items"]
    assert [i["id"] for i in only_bookmarks] == [str(bookmark.pk)]
    tagged = content_mcp.ok("search_items", tags=["work", "home"], tag_match="any")
    assert tagged["total"] == 2
    assert content_mcp.ok("search_items", tags=["work", "home"])["total"] == 0


def test_search_items_pages_with_offset_and_has_more(content_mcp: Mcp, mcp_owner: Any) -> None:
    for n in range(3):
        create(mcp_owner, "note", title=f"n{n}")
    first = content_mcp.ok("search_items", limit=2, sort_by="title", sort_order="asc")
    assert [i["title"] for i in first["items"]] == ["n0", "n1"]
    assert (first["has_more"], first["total"]) == (True, 3)
    rest = content_mcp.ok("search_items", limit=2, offset=2, sort_by="title", sort_order="asc")
    assert [i["title"] for i in rest["items"]] == ["n2"]
    assert rest["has_more"] is False


def test_search_items_skips_archived_items(content_mcp: Mcp, note: Any, mcp_owner: Any) -> None:
    archive_item(owner=mcp_owner, ref=ItemRef(Note, pk=note.pk), actor=Actor())
    assert content_mcp.ok("search_items")["total"] == 0


def test_search_items_rejects_an_invalid_limit(content_mcp: Mcp) -> None:
    body = content_mcp.error("search_items", limit=500)
    assert body["error"] == "validation_error"
    assert "limit" in body["fields"]


# --- get_item -----------------------------------------------------------------------------------


def test_get_item_returns_the_full_item_like_rest(
    content_mcp: Mcp, note: Any, api_for: Any
) -> None:
    item = content_mcp.ok("get_item", id=str(note.pk), type="note")
    assert item == api_for(note.owner).get(f"/api/notes/{note.pk}/").json()
    assert item["content"] == TEXT
    assert item["content_metadata"] == {
        "total_lines": 6,
        "start_line": 1,
        "end_line": 6,
        "is_partial": False,
    }


def test_get_item_reads_a_line_range(content_mcp: Mcp, note: Any) -> None:
    item = content_mcp.ok("get_item", id=str(note.pk), type="note", start_line=2, end_line=3)
    assert item["content"] == "beta\ngamma"
    assert item["content_metadata"] == {
        "total_lines": 6,
        "start_line": 2,
        "end_line": 3,
        "is_partial": True,
    }
    assert item["title"] == "Plans"


def test_get_item_without_content_gives_size_and_preview(content_mcp: Mcp, note: Any) -> None:
    item = content_mcp.ok("get_item", id=str(note.pk), type="note", include_content=False)
    assert "content" not in item
    assert item["content_length"] == len(TEXT)
    assert item["content_preview"].startswith("alpha beta gamma")
    assert item["content_metadata"]["total_lines"] == 6


def test_get_item_with_a_start_past_the_end_is_invalid_line_range(
    content_mcp: Mcp, note: Any
) -> None:
    body = content_mcp.error("get_item", id=str(note.pk), type="note", start_line=7)
    assert body["error"] == "invalid_line_range"
    assert "6" in body["message"]


def test_get_item_line_range_on_null_content_is_invalid(content_mcp: Mcp, mcp_owner: Any) -> None:
    empty = create(mcp_owner, "note", title="Empty")
    body = content_mcp.error("get_item", id=str(empty.pk), type="note", start_line=1)
    assert body["error"] == "invalid_line_range"
    assert "Content is empty" in body["message"]


def test_get_item_reads_archived_and_trashed_items(
    content_mcp: Mcp, note: Any, bookmark: Any, mcp_owner: Any
) -> None:
    archive_item(owner=mcp_owner, ref=ItemRef(Note, pk=note.pk), actor=Actor())
    trash_item(owner=mcp_owner, ref=ItemRef(type(bookmark), pk=bookmark.pk), actor=Actor())
    assert content_mcp.ok("get_item", id=str(note.pk), type="note")["state"] == "archived"
    assert content_mcp.ok("get_item", id=str(bookmark.pk), type="bookmark")["state"] == "deleted"


@pytest.mark.parametrize("item_id", ["not-a-uuid", "01900000-0000-7000-8000-000000000000"])
def test_get_item_of_a_missing_id_is_not_found(content_mcp: Mcp, item_id: str) -> None:
    assert content_mcp.error("get_item", id=item_id, type="note")["error"] == "not_found"


def test_get_item_with_the_wrong_type_is_not_found(content_mcp: Mcp, note: Any) -> None:
    assert content_mcp.error("get_item", id=str(note.pk), type="bookmark")["error"] == "not_found"


# --- search_in_content --------------------------------------------------------------------------


def test_search_in_content_gives_lines_and_context(content_mcp: Mcp, note: Any) -> None:
    found = content_mcp.ok(
        "search_in_content", id=str(note.pk), type="note", query="beta", context_lines=1
    )
    assert found == {
        "matches": [
            {"field": "content", "line": 2, "context": "alpha\nbeta\ngamma"},
            {"field": "content", "line": 5, "context": "delta\nbeta again\nomega"},
        ],
        "total_matches": 2,
    }


def test_search_in_content_without_a_match_is_an_empty_answer(content_mcp: Mcp, note: Any) -> None:
    found = content_mcp.ok("search_in_content", id=str(note.pk), type="note", query="zzz")
    assert found == {"matches": [], "total_matches": 0}


def test_search_in_content_searches_title_and_description(content_mcp: Mcp, note: Any) -> None:
    found = content_mcp.ok(
        "search_in_content", id=str(note.pk), type="note", query="PLAN", fields="title,content"
    )
    assert found["matches"] == [{"field": "title", "line": None, "context": "Plans"}]


def test_search_in_content_with_an_unknown_field_is_a_validation_error(
    content_mcp: Mcp, note: Any
) -> None:
    body = content_mcp.error(
        "search_in_content", id=str(note.pk), type="note", query="a", fields="body"
    )
    assert body["error"] == "validation_error"
    assert "fields" in body["fields"]


def test_search_in_content_limits_context_lines(content_mcp: Mcp, note: Any) -> None:
    body = content_mcp.error(
        "search_in_content", id=str(note.pk), type="note", query="a", context_lines=11
    )
    assert body["error"] == "validation_error"
    assert "context_lines" in body["fields"]


# --- edit_content -------------------------------------------------------------------------------


def test_edit_content_replaces_one_passage_and_records_history(
    content_mcp: Mcp, note: Any, owner_token: Any
) -> None:
    result = content_mcp.ok(
        "edit_content", id=str(note.pk), type="note", old_str="gamma", new_str="GAMMA"
    )
    note.refresh_from_db()
    assert note.content == TEXT.replace("gamma", "GAMMA")
    assert result == {
        "match_type": "exact",
        "line": 3,
        "id": str(note.pk),
        "updated_at": note.updated_at.isoformat().replace("+00:00", "Z"),
    }
    version = ItemVersion.objects.filter(item_id=note.pk).order_by("-version").first()
    assert version is not None
    assert version.source == "mcp-content"
    assert version.token_prefix == owner_token[0].prefix
    assert version.changed_fields == ["content"]


def test_edit_content_of_a_bookmark_tolerates_trailing_whitespace(
    content_mcp: Mcp, mcp_owner: Any
) -> None:
    mark = create(mcp_owner, "bookmark", url="https://example.com/w", content="one  \ntwo\n")
    result = content_mcp.ok(
        "edit_content", id=str(mark.pk), type="bookmark", old_str="one\ntwo", new_str="1\n2"
    )
    assert result["match_type"] == "whitespace_normalized"
    mark.refresh_from_db()
    assert mark.content == "1\n2\n"


def test_edit_content_without_a_match_saves_nothing_and_suggests(
    content_mcp: Mcp, note: Any
) -> None:
    before = note.updated_at
    body = content_mcp.error(
        "edit_content", id=str(note.pk), type="note", old_str="epsilon", new_str="x"
    )
    assert body["error"] == "no_match"
    assert body["suggestion"]
    note.refresh_from_db()
    assert note.updated_at == before


def test_edit_content_with_two_matches_lists_both_lines(content_mcp: Mcp, note: Any) -> None:
    body = content_mcp.error(
        "edit_content", id=str(note.pk), type="note", old_str="beta", new_str="b"
    )
    assert body["error"] == "multiple_matches"
    assert [m["line"] for m in body["matches"]] == [2, 5]
    assert body["matches"][0]["context"] == "alpha\nbeta\ngamma\ndelta"
    assert "uniqueness" in body["suggestion"]


def test_edit_content_of_null_content_is_content_empty(content_mcp: Mcp, mcp_owner: Any) -> None:
    empty = create(mcp_owner, "note", title="Empty")
    body = content_mcp.error(
        "edit_content", id=str(empty.pk), type="note", old_str="a", new_str="b"
    )
    assert body["error"] == "content_empty"


def test_edit_content_needs_a_non_empty_old_str(content_mcp: Mcp, note: Any) -> None:
    body = content_mcp.error("edit_content", id=str(note.pk), type="note", old_str="", new_str="b")
    assert body["error"] == "validation_error"
    assert "old_str" in body["fields"]


def test_edit_content_with_a_stale_expected_updated_at_returns_server_state(
    content_mcp: Mcp, note: Any, api_for: Any
) -> None:
    stale = (note.updated_at - timedelta(seconds=5)).isoformat()
    body = content_mcp.error(
        "edit_content",
        id=str(note.pk),
        type="note",
        old_str="gamma",
        new_str="x",
        expected_updated_at=stale,
    )
    assert body["error"] == "conflict"
    page = api_for(note.owner).get(f"/api/notes/{note.pk}/").json()
    assert body["server_state"] == {k: v for k, v in page.items() if k != "relationships"}
    note.refresh_from_db()
    assert note.content == TEXT


# --- update_item --------------------------------------------------------------------------------


def test_update_item_replaces_tags_and_title(content_mcp: Mcp, note: Any) -> None:
    result = content_mcp.ok(
        "update_item", id=str(note.pk), type="note", title="Plans v2", tags=["home", "Urgent"]
    )
    note.refresh_from_db()
    assert note.title == "Plans v2"
    assert note.tag_names() == ["home", "urgent"]
    assert result["id"] == str(note.pk)
    assert result["summary"] == "Updated note 'Plans v2': title, tags."
    assert result["updated_at"] == note.updated_at.isoformat().replace("+00:00", "Z")


def test_update_item_replaces_the_whole_content(content_mcp: Mcp, note: Any) -> None:
    content_mcp.ok("update_item", id=str(note.pk), type="note", content="fresh")
    note.refresh_from_db()
    assert note.content == "fresh"
    assert note.title == "Plans"
    assert note.tag_names() == ["work"]
    version = ItemVersion.objects.filter(item_id=note.pk).order_by("-version").first()
    assert version is not None
    assert version.source == "mcp-content"


def test_update_item_changes_a_bookmark_url(content_mcp: Mcp, bookmark: Any) -> None:
    content_mcp.ok("update_item", id=str(bookmark.pk), type="bookmark", url="https://example.org")
    bookmark.refresh_from_db()
    assert bookmark.url == "https://example.org/"


def test_update_item_to_a_taken_url_is_a_url_conflict(
    content_mcp: Mcp, bookmark: Any, mcp_owner: Any
) -> None:
    other = create(mcp_owner, "bookmark", url="https://example.com/b")
    body = content_mcp.error(
        "update_item", id=str(other.pk), type="bookmark", url="https://example.com/a"
    )
    assert body["error"] == "url_conflict"
    assert body["existing_id"] == str(bookmark.pk)


def test_update_item_url_on_a_note_is_a_validation_error(content_mcp: Mcp, note: Any) -> None:
    body = content_mcp.error("update_item", id=str(note.pk), type="note", url="https://x.org")
    assert body["error"] == "validation_error"
    assert "url" in body["fields"]


def test_update_item_needs_a_data_field(content_mcp: Mcp, note: Any) -> None:
    body = content_mcp.error(
        "update_item",
        id=str(note.pk),
        type="note",
        expected_updated_at=note.updated_at.isoformat(),
    )
    assert body["error"] == "validation_error"
    assert "at least one of" in body["message"]


def test_update_item_with_a_blank_note_title_is_a_validation_error(
    content_mcp: Mcp, note: Any
) -> None:
    body = content_mcp.error("update_item", id=str(note.pk), type="note", title="  ")
    assert body["error"] == "validation_error"
    note.refresh_from_db()
    assert note.title == "Plans"


def test_update_item_with_a_stale_expected_updated_at_is_a_conflict(
    content_mcp: Mcp, note: Any
) -> None:
    stale = (note.updated_at - timedelta(minutes=1)).replace(tzinfo=None).isoformat()
    body = content_mcp.error(
        "update_item", id=str(note.pk), type="note", title="x", expected_updated_at=stale
    )
    assert body["error"] == "conflict"
    assert body["server_state"]["title"] == "Plans"


def test_update_item_with_a_current_expected_updated_at_succeeds(
    content_mcp: Mcp, note: Any
) -> None:
    current = note.updated_at.isoformat()
    content_mcp.ok(
        "update_item", id=str(note.pk), type="note", title="x", expected_updated_at=current
    )


# --- create_bookmark / create_note --------------------------------------------------------------


def test_create_bookmark_returns_the_item_and_records_history(
    content_mcp: Mcp, mcp_owner: Any
) -> None:
    item = content_mcp.ok(
        "create_bookmark", url="https://example.com", title="Ex", tags=["Read-Later"]
    )
    assert item["url"] == "https://example.com/"
    assert item["type"] == "bookmark"
    assert item["tags"] == ["read-later"]
    assert (item["content"], item["content_metadata"]) == (None, None)
    version = ItemVersion.objects.get(item_id=item["id"])
    assert (version.source, version.action, version.version) == ("mcp-content", "create", 1)


def test_create_bookmark_for_a_saved_url_is_a_url_conflict(content_mcp: Mcp, bookmark: Any) -> None:
    body = content_mcp.error("create_bookmark", url="https://example.com/a")
    assert body["error"] == "url_conflict"
    assert body["existing_id"] == str(bookmark.pk)


def test_create_bookmark_with_an_invalid_url_is_a_validation_error(content_mcp: Mcp) -> None:
    body = content_mcp.error("create_bookmark", url="ftp://example.com")
    assert body["error"] == "validation_error"
    assert "url" in body["fields"]


def test_create_note_returns_the_full_note(content_mcp: Mcp) -> None:
    item = content_mcp.ok(
        "create_note", title="Meeting", content="- a\n- b", description="d", tags=["work"]
    )
    assert (item["title"], item["content"], item["description"]) == ("Meeting", "- a\n- b", "d")
    assert item["content_metadata"]["total_lines"] == 2
    assert "url" not in item
    assert Note.objects.get(pk=item["id"]).tag_names() == ["work"]


def test_create_note_with_a_blank_title_is_a_validation_error(content_mcp: Mcp) -> None:
    body = content_mcp.error("create_note", title=" ")
    assert body["error"] == "validation_error"
    assert "title" in body["fields"]


def test_create_note_with_an_invalid_tag_names_it(content_mcp: Mcp) -> None:
    body = content_mcp.error("create_note", title="t", tags=["not valid!"])
    assert body["error"] == "validation_error"
    assert "not valid!" in body["message"]


def test_create_note_over_the_content_limit_is_field_limit_exceeded(
    content_mcp: Mcp, settings: Any
) -> None:
    settings.TIDDLY_LIMITS = {**settings.TIDDLY_LIMITS, "content": 10}
    body = content_mcp.error("create_note", title="t", content="x" * 11)
    assert body["error"] == "field_limit_exceeded"
    assert (body["field"], body["limit"]) == ("content", 10)


# --- list_tags ----------------------------------------------------------------------------------


def test_list_tags_counts_active_items(content_mcp: Mcp, note: Any, mcp_owner: Any) -> None:
    create(mcp_owner, "note", title="b", tags=["work", "home"])
    archived = create(mcp_owner, "note", title="c", tags=["old"])
    archive_item(owner=mcp_owner, ref=ItemRef(Note, pk=archived.pk), actor=Actor())
    assert content_mcp.ok("list_tags") == {
        "tags": [{"name": "work", "count": 2}, {"name": "home", "count": 1}]
    }


# --- arguments, strangers, deletion -------------------------------------------------------------


def test_an_unknown_argument_is_rejected_not_ignored(content_mcp: Mcp, note: Any) -> None:
    body = content_mcp.error("update_item", id=str(note.pk), type="note", tag=["x"])
    assert body["error"] == "validation_error"
    assert "tag" in body["fields"]
    assert "tags" in body["fields"]["tag"][0]


def test_a_missing_argument_is_a_validation_error(content_mcp: Mcp) -> None:
    body = content_mcp.error("get_item", type="note")
    assert body == {
        "error": "validation_error",
        "message": body["message"],
        "fields": {"id": ["Field required"]},
    }


def test_a_wrongly_typed_argument_is_a_validation_error(content_mcp: Mcp, note: Any) -> None:
    body = content_mcp.error("get_item", id=str(note.pk), type="task")
    assert body["error"] == "validation_error"
    assert "type" in body["fields"]


def test_an_unknown_tool_is_an_error_result(content_mcp: Mcp) -> None:
    body = content_mcp.error("delete_item", id="x")
    assert body["error"] == "not_found"
    assert "search_items" in body["message"]


@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("get_item", {}),
        ("search_in_content", {"query": "a"}),
        ("edit_content", {"old_str": "alpha", "new_str": "x"}),
        ("update_item", {"title": "mine now"}),
    ],
)
def test_another_owners_item_is_not_found(
    other_content_mcp: Mcp, note: Any, tool: str, extra: dict[str, Any]
) -> None:
    body = other_content_mcp.error(tool, id=str(note.pk), type="note", **extra)
    assert body["error"] == "not_found"
    note.refresh_from_db()
    assert (note.title, note.content) == ("Plans", TEXT)


def test_another_owners_items_are_not_listed(other_content_mcp: Mcp, note: Any) -> None:
    assert other_content_mcp.ok("search_items")["total"] == 0
    assert other_content_mcp.ok("list_tags") == {"tags": []}


def test_no_content_tool_can_delete_an_item(content_mcp: Mcp, note: Any) -> None:
    content_mcp.ok("update_item", id=str(note.pk), type="note", content="", tags=[])
    note.refresh_from_db()
    assert (note.deleted_at, note.archived_at) == (None, None)
    assert ItemVersion.objects.filter(item_id=note.pk).count() == 2


def test_writes_happen_now(content_mcp: Mcp, note: Any) -> None:
    content_mcp.ok("edit_content", id=str(note.pk), type="note", old_str="alpha", new_str="a")
    note.refresh_from_db()
    assert timezone.now() - note.updated_at < timedelta(minutes=1)


def test_create_bookmark_with_page_html_and_capture_false_names_both(
    content_mcp: Mcp, mcp_owner: Any
) -> None:
    body = content_mcp.error(
        "create_bookmark", url="https://example.com/p", page_html="<p>x</p>", capture=False
    )
    assert body["error"] == "validation_error"
    assert set(body["fields"]) == {"page_html", "capture"}
    assert not Bookmark.objects.filter(owner=mcp_owner).exists()
