"""Agent workflows across several calls, over both request paths (direct and the package's)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from mcp import ClientSession

from content.models import ItemVersion
from mcp_bridge.tests.conftest import Mcp, create

CODE = """def total(items):
    result = 0
    for item in items:
        result += item.price
    return result


def average(items):
    result = 0
    for item in items:
        result += item.price
    return result / len(items)
"""


def test_search_then_edit_with_the_returned_context(content_mcp: Mcp, mcp_owner: Any) -> None:
    note = create(mcp_owner, "note", title="pricing.py", content=CODE)
    note_id = str(note.pk)

    async def agent(session: ClientSession) -> dict[str, Any]:
        # 1. Where is the text? Twice: an edit of "result += item.price" alone would fail.
        found = await session.call_tool(
            "search_in_content",
            {"id": note_id, "type": "note", "query": "result += item.price", "context_lines": 1},
        )
        matches = found.structuredContent["matches"]  # type: ignore[index]
        assert [m["line"] for m in matches] == [4, 11]
        failed = await session.call_tool(
            "edit_content",
            {"id": note_id, "type": "note", "old_str": "result += item.price", "new_str": "x"},
        )
        assert failed.isError
        assert failed.structuredContent["error"] == "multiple_matches"  # type: ignore[index]
        # 2. The second match's context is unique: edit with it.
        context = matches[1]["context"]
        edited = await session.call_tool(
            "edit_content",
            {
                "id": note_id,
                "type": "note",
                "old_str": context,
                "new_str": context.replace("item.price", "item.price * item.quantity"),
            },
        )
        assert not edited.isError
        # 3. Read back just those lines.
        check = await session.call_tool(
            "get_item", {"id": note_id, "type": "note", "start_line": 10, "end_line": 12}
        )
        return {"edit": edited.structuredContent, "lines": check.structuredContent}

    out = content_mcp.run(agent)
    assert out["edit"]["match_type"] == "exact"
    assert out["edit"]["line"] == 10
    assert out["lines"]["content"] == (
        "    for item in items:\n        result += item.price * item.quantity\n    return "
        "result / len(items)"
    )
    note.refresh_from_db()
    assert note.content.count("item.price * item.quantity") == 1
    assert ItemVersion.objects.filter(item_id=note.pk, source="mcp-content").count() == 1


def test_a_stale_edit_returns_server_state_and_the_retry_succeeds(
    content_mcp: Mcp, mcp_owner: Any, api_for: Any
) -> None:
    note = create(mcp_owner, "note", title="Todo", content="- milk\n- eggs\n")
    note_id = str(note.pk)
    loaded = content_mcp.ok("get_item", id=note_id, type="note")

    # Someone else changes the note through REST meanwhile.
    rest = api_for(mcp_owner)
    response = rest.patch(
        f"/api/notes/{note_id}/", {"content": "- milk\n- eggs\n- bread\n"}, format="json"
    )
    assert response.status_code == 200

    conflict = content_mcp.error(
        "edit_content",
        id=note_id,
        type="note",
        old_str="- eggs",
        new_str="- 12 eggs",
        expected_updated_at=loaded["updated_at"],
    )
    assert conflict["error"] == "conflict"
    current = conflict["server_state"]
    page = rest.get(f"/api/notes/{note_id}/").json()
    assert current == {k: v for k, v in page.items() if k != "relationships"}
    assert current["content"] == "- milk\n- eggs\n- bread\n"

    retried = content_mcp.ok(
        "edit_content",
        id=note_id,
        type="note",
        old_str="- eggs",
        new_str="- 12 eggs",
        expected_updated_at=current["updated_at"],
    )
    assert retried["updated_at"] > current["updated_at"]
    note.refresh_from_db()
    assert note.content == "- milk\n- 12 eggs\n- bread\n"


def test_a_stale_prompt_update_returns_server_state_and_the_retry_succeeds(
    prompt_mcp: Mcp, mcp_owner: Any
) -> None:
    create(
        mcp_owner, "prompt", name="greet", content="Hello {{ who }}", arguments=[{"name": "who"}]
    )
    loaded = prompt_mcp.ok("get_prompt_template", name="greet")
    prompt_mcp.ok("edit_prompt_template", name="greet", old_str="Hello", new_str="Hi")

    conflict = prompt_mcp.error(
        "update_prompt", name="greet", title="Greeting", expected_updated_at=loaded["updated_at"]
    )
    assert conflict["error"] == "conflict"
    assert conflict["server_state"]["content"] == "Hi {{ who }}"

    done = prompt_mcp.ok(
        "update_prompt",
        name="greet",
        title="Greeting",
        expected_updated_at=conflict["server_state"]["updated_at"],
    )
    assert done["summary"] == "Updated prompt 'greet': title."
    rendered = prompt_mcp.run(lambda s: s.get_prompt("greet", {"who": "Ada"}))
    assert rendered.messages[0].content.text == "Hi Ada"  # type: ignore[union-attr]


def test_a_created_prompt_is_listed_and_rendered(prompt_mcp: Mcp) -> None:
    prompt_mcp.ok(
        "create_prompt",
        name="summarize",
        content="Summarize in {{ words }} words:\n{{ text }}",
        arguments=[
            {"name": "text", "description": "The article", "required": True},
            {"name": "words", "description": "Target length"},
        ],
    )

    async def use(session: ClientSession) -> Any:
        listed = await session.list_prompts()
        rendered = await session.get_prompt("summarize", {"text": "Long story", "words": "5"})
        return listed, rendered

    listed, rendered = prompt_mcp.run(use)
    (prompt,) = listed.prompts
    assert [(a.name, a.required) for a in prompt.arguments or []] == [
        ("text", True),
        ("words", False),
    ]
    assert rendered.messages[0].content.text == "Summarize in 5 words:\nLong story"  # type: ignore[union-attr]


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="concurrent writers need PostgreSQL (the test SQLite is an in-memory shared cache)",
)
def test_concurrent_edits_over_a_live_server_all_land(
    live_server_url: str, owner_token: Any, mcp_owner: Any
) -> None:
    import asyncio

    import httpx
    from mcp.client.streamable_http import streamable_http_client

    workers = 6
    lines = [f"line {n}: value-{n}-old" for n in range(workers)]
    note = create(mcp_owner, "note", title="shared", content="\n".join(lines))

    async def agent(n: int) -> bool:
        headers = {"Authorization": f"Bearer {owner_token[1]}"}
        async with (
            httpx.AsyncClient(headers=headers, trust_env=False, timeout=30) as http,
            streamable_http_client(live_server_url + "/mcp/content", http_client=http) as (r, w, _),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            result = await session.call_tool(
                "edit_content",
                {
                    "id": str(note.pk),
                    "type": "note",
                    "old_str": f"value-{n}-old",
                    "new_str": f"value-{n}-new",
                },
            )
            return not result.isError

    async def all_agents() -> list[bool]:
        return list(await asyncio.gather(*(agent(n) for n in range(workers))))

    assert asyncio.run(all_agents()) == [True] * workers
    note.refresh_from_db()
    assert note.content == "\n".join(f"line {n}: value-{n}-new" for n in range(workers))
    assert ItemVersion.objects.filter(item_id=note.pk, source="mcp-content").count() == workers
