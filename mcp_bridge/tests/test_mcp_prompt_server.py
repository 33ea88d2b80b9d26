"""The Prompt server through the official MCP client: the prompts capability and the tools."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from mcp import ClientSession
from mcp.shared.exceptions import McpError

from content.history import Actor
from content.models import ItemVersion
from content.services import ItemRef, archive_item, trash_item
from mcp_bridge import prompt_capability
from mcp_bridge.tests.conftest import Mcp, create
from prompts.models import Prompt

TEMPLATE = (
    "Review this {{ language }} code:\n{{ code }}\n{% if focus %}Focus: {{ focus }}{% endif %}"
)
ARGUMENTS = [
    {"name": "language", "description": "Programming language", "required": True},
    {"name": "code", "description": "The code", "required": True},
    {"name": "focus", "description": None, "required": False},
]


@pytest.fixture
def review(mcp_owner: Any) -> Prompt:
    return create(
        mcp_owner,
        "prompt",
        name="code-review",
        title="Code review",
        description="Reviews code",
        content=TEMPLATE,
        arguments=ARGUMENTS,
        tags=["coding"],
    )


def _archive(prompt: Prompt) -> None:
    archive_item(owner=prompt.owner, ref=ItemRef(Prompt, pk=prompt.pk), actor=Actor())


def _trash(prompt: Prompt) -> None:
    trash_item(owner=prompt.owner, ref=ItemRef(Prompt, pk=prompt.pk), actor=Actor())


# --- prompts/list -------------------------------------------------------------------------------


def test_prompts_list_gives_each_prompt_with_its_arguments(prompt_mcp: Mcp, review: Any) -> None:
    result = prompt_mcp.run(lambda s: s.list_prompts())
    assert result.nextCursor is None
    (prompt,) = result.prompts
    assert (prompt.name, prompt.title, prompt.description) == (
        "code-review",
        "Code review",
        "Reviews code",
    )
    assert [(a.name, a.description, a.required) for a in prompt.arguments or []] == [
        ("language", "Programming language", True),
        ("code", "The code", True),
        ("focus", None, False),
    ]


def test_prompts_list_pages_with_a_cursor(
    prompt_mcp: Mcp, mcp_owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prompt_capability, "PAGE_SIZE", 2)
    for n in range(5):
        create(mcp_owner, "prompt", name=f"p{n}", content="Hi")

    async def all_pages(session: ClientSession) -> list[list[str]]:
        pages, cursor = [], None
        while True:
            result = await session.list_prompts(cursor=cursor)
            pages.append([p.name for p in result.prompts])
            cursor = result.nextCursor
            if cursor is None:
                return pages

    assert prompt_mcp.run(all_pages) == [["p0", "p1"], ["p2", "p3"], ["p4"]]


def test_prompts_list_with_a_bad_cursor_is_an_invalid_params_error(prompt_mcp: Mcp) -> None:
    with pytest.raises(McpError) as caught:
        prompt_mcp.run(lambda s: s.list_prompts(cursor="nonsense"))
    assert caught.value.error.code == -32602
    assert "cursor" in caught.value.error.message


def test_prompts_list_hides_archived_deleted_and_strangers_prompts(
    prompt_mcp: Mcp, review: Any, mcp_owner: Any, mcp_other: Any
) -> None:
    _archive(create(mcp_owner, "prompt", name="archived", content="a"))
    _trash(create(mcp_owner, "prompt", name="trashed", content="t"))
    create(mcp_owner, "prompt", name="scheduled", content="s", archived_at=_future())
    create(mcp_other, "prompt", name="theirs", content="x")
    names = [p.name for p in prompt_mcp.run(lambda s: s.list_prompts()).prompts]
    assert sorted(names) == ["code-review", "scheduled"]


def _future() -> Any:
    from django.utils import timezone

    return timezone.now() + timedelta(days=1)


# --- prompts/get --------------------------------------------------------------------------------


def test_prompts_get_renders_and_bumps_last_used_at(prompt_mcp: Mcp, review: Prompt) -> None:
    before = review.last_used_at
    result = prompt_mcp.run(
        lambda s: s.get_prompt("code-review", {"language": "Python", "code": "x = 1"})
    )
    (message,) = result.messages
    assert message.role == "user"
    assert message.content.text == "Review this Python code:\nx = 1\n"  # type: ignore[union-attr]
    assert result.description == "Reviews code"
    review.refresh_from_db()
    assert review.last_used_at > before
    assert review.updated_at == review.created_at  # a render is not an edit


def test_prompts_get_fills_optional_arguments(prompt_mcp: Mcp, review: Prompt) -> None:
    args = {"language": "Go", "code": "f()", "focus": "naming"}
    result = prompt_mcp.run(lambda s: s.get_prompt("code-review", args))
    assert result.messages[0].content.text.endswith("Focus: naming")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"language": "Go"}, "code"),
        ({"language": "Go", "code": "x", "colour": "red"}, "colour"),
    ],
)
def test_prompts_get_with_bad_arguments_is_an_error_naming_them(
    prompt_mcp: Mcp, review: Prompt, arguments: dict[str, str], expected: str
) -> None:
    with pytest.raises(McpError) as caught:
        prompt_mcp.run(lambda s: s.get_prompt("code-review", arguments))
    error = caught.value.error
    assert error.code == -32602
    assert expected in error.message
    assert error.data["error"] == "invalid_template"
    review.refresh_from_db()
    assert review.last_used_at == review.created_at


def test_prompts_get_refuses_sandbox_escapes(prompt_mcp: Mcp, mcp_owner: Any) -> None:
    Prompt.objects.filter(pk=create(mcp_owner, "prompt", name="evil", content="Hi").pk).update(
        content="{{ ''.__class__.__mro__ }}"
    )
    with pytest.raises(McpError) as caught:
        prompt_mcp.run(lambda s: s.get_prompt("evil", {}))
    assert caught.value.error.message == "Template uses a disallowed operation."


@pytest.mark.parametrize("hide", [_archive, _trash])
def test_prompts_get_of_a_hidden_prompt_is_not_found(
    prompt_mcp: Mcp, review: Prompt, hide: Any
) -> None:
    hide(review)
    with pytest.raises(McpError) as caught:
        prompt_mcp.run(lambda s: s.get_prompt("code-review", {"language": "a", "code": "b"}))
    assert caught.value.error.data["error"] == "not_found"


def test_prompts_get_of_another_owners_prompt_is_not_found(
    other_prompt_mcp: Mcp, review: Prompt
) -> None:
    with pytest.raises(McpError) as caught:
        other_prompt_mcp.run(lambda s: s.get_prompt("code-review", {}))
    assert caught.value.error.data["error"] == "not_found"


# --- tools --------------------------------------------------------------------------------------


def test_search_prompts_lists_prompts_with_arguments(prompt_mcp: Mcp, review: Prompt) -> None:
    page = prompt_mcp.ok("search_prompts", query="review")
    assert page["total"] == 1
    (item,) = page["items"]
    assert (item["name"], item["arguments"], item["tags"]) == ("code-review", ARGUMENTS, ["coding"])
    assert item["content_length"] == len(TEMPLATE)
    assert "content" not in item
    assert prompt_mcp.ok("search_prompts", tags=["other"])["total"] == 0


def test_get_prompt_template_returns_the_raw_template(prompt_mcp: Mcp, review: Prompt) -> None:
    template = prompt_mcp.ok("get_prompt_template", name="code-review")
    assert template == {
        "id": str(review.pk),
        "name": "code-review",
        "title": "Code review",
        "description": "Reviews code",
        "content": TEMPLATE,
        "arguments": ARGUMENTS,
        "tags": ["coding"],
        "updated_at": review.updated_at.isoformat().replace("+00:00", "Z"),
        "content_metadata": {"total_lines": 3, "start_line": 1, "end_line": 3, "is_partial": False},
    }


def test_get_prompt_template_reads_a_line_range(prompt_mcp: Mcp, review: Prompt) -> None:
    template = prompt_mcp.ok("get_prompt_template", name="code-review", start_line=2, end_line=2)
    assert template["content"] == "{{ code }}"
    assert template["content_metadata"]["is_partial"] is True


def test_get_prompt_metadata_gives_size_and_preview(prompt_mcp: Mcp, review: Prompt) -> None:
    meta = prompt_mcp.ok("get_prompt_metadata", name="code-review")
    assert "content" not in meta
    assert meta["content_length"] == len(TEMPLATE)
    assert meta["content_preview"].startswith("Review this {{ language }} code: {{ code }}")
    assert (meta["name"], meta["arguments"], meta["tags"]) == ("code-review", ARGUMENTS, ["coding"])


def test_create_prompt_validates_and_records_history(prompt_mcp: Mcp, owner_token: Any) -> None:
    result = prompt_mcp.ok(
        "create_prompt",
        name="greet",
        content="Hello {{ who }}",
        arguments=[{"name": "who", "required": True}],
        tags=["fun"],
    )
    prompt = Prompt.objects.get(name="greet")
    assert result == {
        "id": str(prompt.pk),
        "name": "greet",
        "updated_at": prompt.updated_at.isoformat().replace("+00:00", "Z"),
        "summary": "Created prompt 'greet'.",
    }
    assert prompt.arguments == [{"name": "who", "description": None, "required": True}]
    version = ItemVersion.objects.get(item_id=prompt.pk)
    assert (version.source, version.token_prefix) == ("mcp-prompts", owner_token[0].prefix)


def test_create_prompt_with_an_undeclared_variable_is_invalid_template(prompt_mcp: Mcp) -> None:
    body = prompt_mcp.error("create_prompt", name="greet", content="Hello {{ who }}")
    assert body["error"] == "invalid_template"
    assert "who" in body["message"]
    assert not Prompt.objects.exists()


def test_create_prompt_with_a_taken_name_is_a_name_conflict(
    prompt_mcp: Mcp, review: Prompt
) -> None:
    body = prompt_mcp.error("create_prompt", name="code-review", content="x")
    assert body["error"] == "name_conflict"
    assert body["existing_id"] == str(review.pk)


def test_create_prompt_rejects_unknown_argument_fields(prompt_mcp: Mcp) -> None:
    body = prompt_mcp.error(
        "create_prompt", name="greet", content="{{ who }}", arguments=[{"name": "who", "type": "x"}]
    )
    assert body["error"] == "validation_error"
    assert "arguments.0.type" in body["fields"]


def test_edit_prompt_template_changes_text_and_arguments_together(
    prompt_mcp: Mcp, review: Prompt
) -> None:
    result = prompt_mcp.ok(
        "edit_prompt_template",
        name="code-review",
        old_str="{% if focus %}Focus: {{ focus }}{% endif %}",
        new_str="Be brief.",
        arguments=ARGUMENTS[:2],
    )
    review.refresh_from_db()
    assert review.content.endswith("\nBe brief.")
    assert review.arguments == ARGUMENTS[:2]
    assert result == {
        "id": str(review.pk),
        "name": "code-review",
        "updated_at": review.updated_at.isoformat().replace("+00:00", "Z"),
        "match_type": "exact",
        "line": 3,
        "summary": "Updated prompt 'code-review' (match: exact at line 3).",
    }
    version = ItemVersion.objects.filter(item_id=review.pk).order_by("-version").first()
    assert version is not None
    assert (version.source, sorted(version.changed_fields)) == (
        "mcp-prompts",
        ["arguments", "content"],
    )


def test_edit_prompt_template_that_orphans_an_argument_saves_nothing(
    prompt_mcp: Mcp, review: Prompt
) -> None:
    body = prompt_mcp.error(
        "edit_prompt_template",
        name="code-review",
        old_str="{% if focus %}Focus: {{ focus }}{% endif %}",
        new_str="",
    )
    assert body["error"] == "invalid_template"
    assert "focus" in body["message"]
    review.refresh_from_db()
    assert review.content == TEMPLATE


def test_edit_prompt_template_with_two_matches_lists_them(prompt_mcp: Mcp, review: Prompt) -> None:
    body = prompt_mcp.error("edit_prompt_template", name="code-review", old_str="code", new_str="x")
    assert body["error"] == "multiple_matches"
    assert [m["line"] for m in body["matches"]] == [1, 2]


def test_edit_prompt_template_without_a_match_is_no_match(prompt_mcp: Mcp, review: Prompt) -> None:
    body = prompt_mcp.error("edit_prompt_template", name="code-review", old_str="zzz", new_str="x")
    assert body["error"] == "no_match"


def test_update_prompt_renames_and_retitles(prompt_mcp: Mcp, review: Prompt) -> None:
    result = prompt_mcp.ok(
        "update_prompt", name="code-review", new_name="python-review", title="Python review"
    )
    review.refresh_from_db()
    assert (review.name, review.title) == ("python-review", "Python review")
    assert result["name"] == "python-review"
    assert result["summary"] == "Updated prompt 'python-review': new_name, title."
    assert prompt_mcp.error("get_prompt_template", name="code-review")["error"] == "not_found"


def test_update_prompt_rewrites_template_and_arguments(prompt_mcp: Mcp, review: Prompt) -> None:
    prompt_mcp.ok(
        "update_prompt",
        name="code-review",
        content="Summarize {{ text }}",
        arguments=[{"name": "text", "description": "What to summarize", "required": True}],
    )
    review.refresh_from_db()
    assert review.content == "Summarize {{ text }}"
    assert review.arguments == [
        {"name": "text", "description": "What to summarize", "required": True}
    ]
    assert review.tag_names() == ["coding"]


def test_update_prompt_is_all_or_nothing(prompt_mcp: Mcp, review: Prompt) -> None:
    body = prompt_mcp.error(
        "update_prompt", name="code-review", title="New title", content="Just {{ undeclared }}"
    )
    assert body["error"] == "invalid_template"
    review.refresh_from_db()
    assert (review.title, review.content) == ("Code review", TEMPLATE)


def test_update_prompt_to_a_taken_name_is_a_name_conflict(
    prompt_mcp: Mcp, review: Prompt, mcp_owner: Any
) -> None:
    create(mcp_owner, "prompt", name="other", content="x")
    body = prompt_mcp.error("update_prompt", name="other", new_name="code-review")
    assert body["error"] == "name_conflict"


def test_update_prompt_with_a_stale_expected_updated_at_is_a_conflict(
    prompt_mcp: Mcp, review: Prompt
) -> None:
    stale = (review.updated_at - timedelta(seconds=1)).isoformat()
    body = prompt_mcp.error(
        "update_prompt", name="code-review", title="x", expected_updated_at=stale
    )
    assert body["error"] == "conflict"
    assert body["server_state"]["name"] == "code-review"
    assert body["server_state"]["content"] == TEMPLATE


def test_update_prompt_needs_a_data_field(prompt_mcp: Mcp, review: Prompt) -> None:
    assert prompt_mcp.error("update_prompt", name="code-review")["error"] == "validation_error"


def test_prompt_list_tags_counts_active_items(prompt_mcp: Mcp, review: Prompt) -> None:
    assert prompt_mcp.ok("list_tags") == {"tags": [{"name": "coding", "count": 1}]}


PROMPT_TOOLS: list[tuple[str, dict[str, Any]]] = [
    ("get_prompt_template", {}),
    ("get_prompt_metadata", {}),
    ("edit_prompt_template", {"old_str": "Review", "new_str": "Check"}),
    ("update_prompt", {"title": "x"}),
]


@pytest.mark.parametrize("hide", [_archive, _trash])
@pytest.mark.parametrize(("tool", "extra"), PROMPT_TOOLS)
def test_archived_and_deleted_prompts_are_invisible_to_prompt_tools(
    prompt_mcp: Mcp, review: Prompt, hide: Any, tool: str, extra: dict[str, Any]
) -> None:
    hide(review)
    body = prompt_mcp.error(tool, name="code-review", **extra)
    assert body["error"] == "not_found"
    assert "restore" in body["message"]
    assert prompt_mcp.ok("search_prompts")["total"] == 0
    review.refresh_from_db()
    assert (review.title, review.content) == ("Code review", TEMPLATE)


@pytest.mark.parametrize(("tool", "extra"), PROMPT_TOOLS)
def test_another_owners_prompt_is_not_found(
    other_prompt_mcp: Mcp, review: Prompt, tool: str, extra: dict[str, Any]
) -> None:
    assert other_prompt_mcp.error(tool, name="code-review", **extra)["error"] == "not_found"
    assert other_prompt_mcp.ok("search_prompts")["total"] == 0
