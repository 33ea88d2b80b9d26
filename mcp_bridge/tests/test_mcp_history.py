"""Edits made through the MCP servers show up in version history with their source (SPEC §6, §7)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework.test import APIClient

from mcp_bridge.tests.conftest import Mcp
from tiddly.models import ApiToken


def history(token: str, kind: str, pk: str) -> list[dict[str, Any]]:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = client.get(reverse(f"{kind}-history", kwargs={"pk": pk}))
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_content_server_edits_are_recorded_with_source_mcp_content(
    content_mcp: Mcp, owner_token: tuple[ApiToken, str]
) -> None:
    token, plaintext = owner_token
    note = content_mcp.ok("create_note", title="Agent notes", content="alpha\nbeta\n")
    content_mcp.ok("edit_content", id=note["id"], type="note", old_str="beta", new_str="gamma")
    content_mcp.ok("update_item", id=note["id"], type="note", title="Renamed")

    entries = history(plaintext, "note", note["id"])
    assert [(e["version"], e["action"], e["changed_fields"]) for e in entries] == [
        (3, "update", ["title"]),
        (2, "update", ["content"]),
        (1, "create", ["content", "title"]),
    ]
    assert {e["source"] for e in entries} == {"mcp-content"}
    assert {e["token_prefix"] for e in entries} == {token.prefix}


def test_prompt_server_edits_are_recorded_with_source_mcp_prompts(
    prompt_mcp: Mcp, owner_token: tuple[ApiToken, str]
) -> None:
    _, plaintext = owner_token
    prompt = prompt_mcp.ok(
        "create_prompt",
        name="greet",
        content="Hello {{ who }}",
        arguments=[{"name": "who", "required": True}],
    )
    prompt_mcp.ok("edit_prompt_template", name="greet", old_str="Hello", new_str="Hi")

    entries = history(plaintext, "prompt", prompt["id"])
    assert [(e["version"], e["source"]) for e in entries] == [
        (2, "mcp-prompts"),
        (1, "mcp-prompts"),
    ]
