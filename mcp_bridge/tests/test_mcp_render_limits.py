"""MCP prompts/get is bounded like REST /render/ (SPEC §5.2): a JSON-RPC error, code first."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.shared.exceptions import McpError

from mcp_bridge.tests.conftest import Mcp, create
from prompts.models import Prompt

RUNAWAY = {
    "nested loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "huge output": "{% set s = 'a' * 1000000 %}{% for i in range(200) %}{{ s }}{% endfor %}",
    "huge center": "{{ 'a'|center(1000000000) }}",
}


@pytest.mark.parametrize("content", RUNAWAY.values(), ids=RUNAWAY.keys())
def test_prompts_get_of_a_runaway_template_is_render_limit_exceeded(
    prompt_mcp: Mcp, mcp_owner: Any, content: str
) -> None:
    prompt = create(mcp_owner, "prompt", name="runaway", content=content)
    with pytest.raises(McpError) as caught:
        prompt_mcp.run(lambda s: s.get_prompt("runaway", {}))
    error = caught.value.error
    assert error.code == -32602
    assert error.message.startswith("render_limit_exceeded: ")
    assert error.data["error"] == "render_limit_exceeded"
    prompt.refresh_from_db()
    assert prompt.last_used_at == prompt.created_at  # a failed render is not a use


def test_prompts_get_other_errors_keep_their_plain_message(prompt_mcp: Mcp, mcp_owner: Any) -> None:
    create(
        mcp_owner,
        "prompt",
        name="needs-x",
        content="{{ x }}",
        arguments=[{"name": "x", "required": True}],
    )
    with pytest.raises(McpError) as caught:
        prompt_mcp.run(lambda s: s.get_prompt("needs-x", {}))
    assert caught.value.error.message == "Missing required argument(s): x"
    assert Prompt.objects.get(name="needs-x").arguments[0]["name"] == "x"
