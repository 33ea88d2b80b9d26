"""replace_all, edits and dry_run on the MCP edit tools, and the history tools (SPEC §7
"Further tools"), through the official MCP client."""

from __future__ import annotations

from typing import Any

from mcp_bridge.tests.conftest import Mcp, create
from tiddly.models import ApiToken


def _note(owner: Any, content: str) -> Any:
    return create(owner, "note", title="Agent note", content=content)


def _content(note: Any) -> str:
    return type(note).objects.get(pk=note.pk).content  # type: ignore[no-any-return]


def test_edit_content_input_schema_is_flat(content_mcp: Mcp) -> None:
    tools = {t.name: t for t in content_mcp.run(lambda s: s.list_tools()).tools}
    props = tools["edit_content"].inputSchema["properties"]
    assert {"replace_all", "edits", "dry_run"} <= set(props)
    assert (
        "example" in props["edits"]["description"].lower() or "[{" in props["edits"]["description"]
    )
    item_schema = props["edits"]["anyOf"][0]["items"]
    if "$ref" in item_schema:
        item_schema = tools["edit_content"].inputSchema["$defs"][item_schema["$ref"].split("/")[-1]]
    assert set(item_schema["properties"]) == {"old_str", "new_str", "replace_all"}
    assert "anyOf" not in str(item_schema)
    assert "replace_all" in (tools["edit_content"].description or "")


def test_edit_content_replace_all_counts_replacements(content_mcp: Mcp, mcp_owner: Any) -> None:
    note = _note(mcp_owner, "colour, colour, colour")

    result = content_mcp.ok(
        "edit_content",
        id=str(note.pk),
        type="note",
        old_str="colour",
        new_str="color",
        replace_all=True,
    )

    assert result["replacements"] == 3
    assert (result["match_type"], result["line"]) == ("exact", 1)
    assert _content(note) == "color, color, color"


def test_edit_content_edits_apply_as_one_version(content_mcp: Mcp, mcp_owner: Any) -> None:
    note = _note(mcp_owner, "one\ntwo\nthree")

    result = content_mcp.ok(
        "edit_content",
        id=str(note.pk),
        type="note",
        edits=[{"old_str": "one", "new_str": "1"}, {"old_str": "three", "new_str": "3"}],
    )

    assert result["edits"] == [
        {"match_type": "exact", "line": 1, "replacements": 1},
        {"match_type": "exact", "line": 3, "replacements": 1},
    ]
    assert "match_type" not in result
    assert _content(note) == "1\ntwo\n3"
    history = content_mcp.ok("get_item_history", id=str(note.pk), type="note")
    assert [v["version"] for v in history["versions"]] == [2, 1]


def test_edit_content_failing_edit_reports_edit_index(content_mcp: Mcp, mcp_owner: Any) -> None:
    note = _note(mcp_owner, "one\ntwo")

    error = content_mcp.error(
        "edit_content",
        id=str(note.pk),
        type="note",
        edits=[{"old_str": "one", "new_str": "1"}, {"old_str": "nine", "new_str": "9"}],
    )

    assert (error["error"], error["edit_index"]) == ("no_match", 1)
    assert _content(note) == "one\ntwo"


def test_edit_content_overlapping_edits(content_mcp: Mcp, mcp_owner: Any) -> None:
    note = _note(mcp_owner, "alpha beta gamma")

    error = content_mcp.error(
        "edit_content",
        id=str(note.pk),
        type="note",
        edits=[
            {"old_str": "alpha beta", "new_str": "x"},
            {"old_str": "beta gamma", "new_str": "y"},
        ],
    )

    assert error["error"] == "overlapping_edits"
    assert (error["edit_indexes"], error["lines"]) == ([0, 1], [1, 1])


def test_edit_content_with_old_str_and_edits_is_a_validation_error(
    content_mcp: Mcp, mcp_owner: Any
) -> None:
    note = _note(mcp_owner, "one")

    error = content_mcp.error(
        "edit_content",
        id=str(note.pk),
        type="note",
        old_str="one",
        new_str="1",
        edits=[{"old_str": "one", "new_str": "1"}],
    )

    assert error["error"] == "validation_error"
    assert "edits" in error["fields"]


def test_edit_content_dry_run_returns_a_diff_and_saves_nothing(
    content_mcp: Mcp, mcp_owner: Any
) -> None:
    note = _note(mcp_owner, "one\ntwo\n")

    result = content_mcp.ok(
        "edit_content", id=str(note.pk), type="note", old_str="two", new_str="2", dry_run=True
    )

    assert result["dry_run"] is True
    assert "-two\n+2" in result["diff"]
    assert result["diff_truncated"] is False
    assert _content(note) == "one\ntwo\n"
    assert content_mcp.ok("get_item_history", id=str(note.pk), type="note")["total"] == 1


def test_edit_prompt_template_takes_edits_replace_all_and_dry_run(
    prompt_mcp: Mcp, mcp_owner: Any
) -> None:
    create(
        mcp_owner, "prompt", name="greet", content="Hi {{ who }}. Hi!", arguments=[{"name": "who"}]
    )

    preview = prompt_mcp.ok(
        "edit_prompt_template",
        name="greet",
        old_str="Hi",
        new_str="Hey",
        replace_all=True,
        dry_run=True,
    )
    broken = prompt_mcp.error(
        "edit_prompt_template",
        name="greet",
        edits=[{"old_str": "{{ who }}", "new_str": "{{ whom }}"}],
        dry_run=True,
    )
    done = prompt_mcp.ok(
        "edit_prompt_template",
        name="greet",
        edits=[{"old_str": "Hi {{", "new_str": "Hello {{"}, {"old_str": "Hi!", "new_str": "Bye!"}],
    )

    assert (preview["replacements"], preview["dry_run"]) == (2, True)
    assert "Would update" in preview["summary"]
    assert broken["error"] == "invalid_template"
    assert [e["line"] for e in done["edits"]] == [1, 1]
    assert done["name"] == "greet"
    template = prompt_mcp.ok("get_prompt_template", name="greet")
    assert template["content"] == "Hello {{ who }}. Bye!"


# --- history tools ------------------------------------------------------------------------------


def test_item_history_version_and_restore_match_rest(
    content_mcp: Mcp, mcp_owner: Any, owner_token: tuple[ApiToken, str], api_for: Any
) -> None:
    note = _note(mcp_owner, "first\n")
    content_mcp.ok("edit_content", id=str(note.pk), type="note", old_str="first", new_str="second")
    content_mcp.ok("update_item", id=str(note.pk), type="note", title="Renamed")

    page = content_mcp.ok("get_item_history", id=str(note.pk), type="note", limit=2)
    version = content_mcp.ok(
        "get_item_version", id=str(note.pk), type="note", version=2, include_diff=True
    )
    rest = api_for(mcp_owner).get(f"/api/notes/{note.pk}/history/2/").json()

    assert page["total"] == 3
    assert page["has_more"] is True
    assert page["versions"][0] == {
        "version": 3,
        "action": "update",
        "changed_fields": ["title"],
        "source": "mcp-content",
        "token_prefix": owner_token[0].prefix,
        "created_at": page["versions"][0]["created_at"],
    }
    assert {k: v for k, v in version.items() if k not in ("diff", "diff_truncated")} == rest
    assert "-first\n+second" in version["diff"]

    restored = content_mcp.ok("restore_item_version", id=str(note.pk), type="note", version=1)

    assert restored["version"] == 4
    assert restored["id"] == str(note.pk)
    assert _content(note) == "first\n"
    latest = content_mcp.ok("get_item_history", id=str(note.pk), type="note", limit=1)
    assert latest["versions"][0]["action"] == "restore"
    assert latest["versions"][0]["source"] == "mcp-content"


def test_item_version_reads_a_line_window(content_mcp: Mcp, mcp_owner: Any) -> None:
    note = _note(mcp_owner, "a\nb\nc\nd")

    version = content_mcp.ok(
        "get_item_version", id=str(note.pk), type="note", version=1, start_line=2, end_line=3
    )

    assert version["content"] == "b\nc"
    assert version["content_metadata"]["is_partial"] is True
    assert "diff" not in version


def test_history_tools_answer_not_found_for_a_strangers_item(
    other_content_mcp: Mcp, other_prompt_mcp: Mcp, mcp_owner: Any
) -> None:
    note = _note(mcp_owner, "mine")
    create(mcp_owner, "prompt", name="mine", content="text")
    ref = {"id": str(note.pk), "type": "note"}

    errors = [
        other_content_mcp.error("get_item_history", **ref),
        other_content_mcp.error("get_item_version", **ref, version=1),
        other_content_mcp.error("restore_item_version", **ref, version=1),
        other_prompt_mcp.error("get_prompt_history", name="mine"),
        other_prompt_mcp.error("get_prompt_version", name="mine", version=1),
        other_prompt_mcp.error("restore_prompt_version", name="mine", version=1),
    ]

    assert {e["error"] for e in errors} == {"not_found"}


def test_restoring_the_current_version_is_a_validation_error(
    content_mcp: Mcp, mcp_owner: Any
) -> None:
    note = _note(mcp_owner, "only")

    error = content_mcp.error("restore_item_version", id=str(note.pk), type="note", version=1)

    assert error["error"] == "validation_error"


def test_prompt_history_version_and_restore_by_name(prompt_mcp: Mcp, mcp_owner: Any) -> None:
    create(mcp_owner, "prompt", name="greet", content="Hi {{ who }}", arguments=[{"name": "who"}])
    prompt_mcp.ok("edit_prompt_template", name="greet", old_str="Hi", new_str="Hello")

    page = prompt_mcp.ok("get_prompt_history", name="greet")
    version = prompt_mcp.ok("get_prompt_version", name="greet", version=2, include_diff=True)
    restored = prompt_mcp.ok("restore_prompt_version", name="greet", version=1)

    assert [(v["version"], v["source"]) for v in page["versions"]] == [
        (2, "mcp-prompts"),
        (1, "test"),
    ]
    assert version["content"] == "Hello {{ who }}"
    assert version["metadata"]["name"] == "greet"
    assert "+Hello" in version["diff"]
    assert (restored["name"], restored["version"]) == ("greet", 3)
    assert prompt_mcp.ok("get_prompt_template", name="greet")["content"] == "Hi {{ who }}"
    latest = prompt_mcp.ok("get_prompt_history", name="greet", limit=1)["versions"][0]
    assert (latest["action"], latest["source"]) == ("restore", "mcp-prompts")
