"""Finishing the tool registry after django-mcp-server has built it: annotations and order.

``MCPToolset`` has no way to declare annotations and registers methods alphabetically, so both
are applied here, once, at start-up (SPEC §7: readOnlyHint, destructiveHint, idempotentHint).
"""

from __future__ import annotations

from mcp.types import ToolAnnotations

from mcp_bridge.servers import TiddlyMCP, content_server, prompt_server

READ = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
CREATE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
# Overwrites part of the content: repeating it may apply twice (or fail with no_match).
EDIT = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False
)
# Overwrites fields with the given values: repeating it changes nothing more.
UPDATE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
)

TITLES_AND_ANNOTATIONS: dict[TiddlyMCP, dict[str, tuple[str, ToolAnnotations]]] = {
    content_server: {
        "search_items": ("Search bookmarks and notes", READ),
        "get_item": ("Read a bookmark or note", READ),
        "search_in_content": ("Find text inside an item", READ),
        "edit_content": ("Edit part of an item's content", EDIT),
        "update_item": ("Update an item's metadata or whole content", UPDATE),
        "create_bookmark": ("Save a bookmark", CREATE),
        "create_note": ("Create a note", CREATE),
        "list_tags": ("List tags", READ),
    },
    prompt_server: {
        "search_prompts": ("Search prompt templates", READ),
        "get_prompt_template": ("Read a prompt's template", READ),
        "get_prompt_metadata": ("Read a prompt's metadata", READ),
        "create_prompt": ("Create a prompt template", CREATE),
        "edit_prompt_template": ("Edit part of a prompt's template", EDIT),
        "update_prompt": ("Rewrite or update a prompt", UPDATE),
        "list_tags": ("List tags", READ),
    },
}


def finish() -> None:
    for server, spec in TITLES_AND_ANNOTATIONS.items():
        tools = server._tool_manager._tools
        missing = set(spec) ^ set(tools)
        if missing:
            raise RuntimeError(f"{server.name}: tool set differs from the spec: {sorted(missing)}")
        for name, (title, hints) in spec.items():
            tool = tools[name]
            tool.title = title
            tool.annotations = hints
        # tools/list in the order of SPEC §7 (reads, then edits, then creates).
        server._tool_manager._tools = {name: tools[name] for name in spec}
