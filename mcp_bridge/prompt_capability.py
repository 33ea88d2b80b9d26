"""The Prompt server's MCP prompts capability: ``prompts/list`` and ``prompts/get`` (SPEC §7, §5.2).

Prompts are the caller's own and change at any time, so these are handlers on the server's
low-level ``Server`` (registered with its public decorators) that query per request; both need
``prompts:read``. They run in the event loop, so the ORM work is wrapped in ``sync_to_async``.
Failures are JSON-RPC errors (the protocol has no isError for prompts) whose ``data`` is the REST
error object.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from asgiref.sync import sync_to_async
from mcp import types
from mcp.shared.exceptions import McpError

from content import queries, services
from content.queries import ItemRef
from mcp_bridge import calls
from mcp_bridge.results import internal_error
from mcp_bridge.servers import TiddlyServer
from prompts.models import Prompt
from prompts.services import render_prompt
from tiddly.errors import TiddlyError
from tiddly.scopes import require_scope

PAGE_SIZE = 100


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


def decode_cursor(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        offset = json.loads(base64.urlsafe_b64decode(cursor.encode()))["offset"]
    except (ValueError, TypeError, KeyError, binascii.Error):
        offset = None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise _error(
            {
                "error": "validation_error",
                "message": "Invalid cursor: pass the nextCursor of a previous prompts/list "
                "result, or none for the first page.",
                "fields": {"cursor": ["Invalid cursor."]},
            }
        )
    return offset


def _error(body: dict[str, Any], message: str | None = None) -> McpError:
    message = body["message"] if message is None else message
    return McpError(types.ErrorData(code=types.INVALID_PARAMS, message=message, data=body))


def _listed(prompt: Prompt) -> types.Prompt:
    return types.Prompt(
        name=prompt.name,
        title=prompt.title or None,
        # SPEC §7: every prompt has a description (clients list prompts by it).
        description=prompt.description or prompt.title or prompt.name,
        arguments=[
            types.PromptArgument(
                name=arg["name"],
                description=arg.get("description"),
                required=bool(arg.get("required")),
            )
            for arg in prompt.arguments
        ],
    )


def _list_page(owner: Any, offset: int) -> types.ListPromptsResult:
    # Oldest first: a prompt created meanwhile lands on the last page instead of shifting pages.
    params = queries.ListParams(
        sort_by="created_at", sort_order="asc", limit=PAGE_SIZE, offset=offset
    )
    total, prompts = queries.list_items(owner, Prompt, params)
    more = offset + len(prompts) < total
    return types.ListPromptsResult(
        prompts=[_listed(p) for p in prompts if isinstance(p, Prompt)],
        nextCursor=encode_cursor(offset + len(prompts)) if more else None,
    )


def _render(owner: Any, name: str, arguments: dict[str, Any] | None) -> types.GetPromptResult:
    prompt = queries.get_owned(owner, ItemRef(Prompt, name=name))
    assert isinstance(prompt, Prompt)
    text = render_prompt(prompt=prompt, values=dict(arguments or {}))
    services.track_usage(owner=owner, ref=ItemRef(Prompt, pk=prompt.pk))
    return types.GetPromptResult(
        description=prompt.description or prompt.title or None,
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )


async def _guarded(fn: Any, *args: Any) -> Any:
    try:
        # Both requests read prompts (a render only bumps last_used_at): SPEC §8.1.
        require_scope(calls.principal(), f"{calls.current().server.area}:read")
        return await sync_to_async(fn)(*args)
    except McpError:
        raise
    except TiddlyError as exc:
        raise _error(exc.body(), exc.rpc_message()) from None
    except Exception:
        raise internal_error("prompts") from None


async def list_prompts(request: types.ListPromptsRequest) -> types.ListPromptsResult:
    cursor = request.params.cursor if request.params else None
    offset = decode_cursor(cursor)
    return await _guarded(_list_page, calls.owner(), offset)


async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    return await _guarded(_render, calls.owner(), name, arguments)


def register(server: TiddlyServer) -> None:
    server.lowlevel.list_prompts()(list_prompts)
    server.lowlevel.get_prompt()(get_prompt)
