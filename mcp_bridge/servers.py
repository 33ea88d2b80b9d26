"""The two MCP servers: django-mcp-server ``DjangoMCP`` instances, one per endpoint (SPEC §7).

Tools are declared as ``MCPToolset`` classes in ``content_tools`` and ``prompt_tools`` and bound to
these servers; the prompts capability of the Prompt server is in ``prompt_capability``. The URL
conf mounts each server with ``McpView.as_view(mcp_server=…)``.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from mcp import types
from mcp_server.djangomcp import DjangoMCP

from mcp_bridge import instructions
from mcp_bridge.results import (
    INTERNAL_ERROR,
    body_for,
    error_result,
    logger,
    success_result,
    unknown_arguments,
    unknown_tool,
)

SERVER_VERSION = "1.0.0"

_RESOURCE_REQUESTS = (
    types.ListResourcesRequest,
    types.ReadResourceRequest,
    types.ListResourceTemplatesRequest,
)
_PROMPT_REQUESTS = (types.ListPromptsRequest, types.GetPromptRequest)


class TiddlyMCP(DjangoMCP):
    """A stateless ``DjangoMCP`` whose tool results are exactly the REST JSON (SPEC §3.4, §7).

    ``call_tool`` still runs FastMCP's tool registry (argument validation, the toolset call) and
    checks the result against the tool's typed return, but builds the ``CallToolResult`` itself:
    FastMCP's conversion would pad structuredContent with ``null`` for every ``NotRequired`` key
    (a note would gain ``url: null``) and re-validate it with jsonschema, while the text should be
    the same object as compact JSON. Failures become ``isError`` results with the REST error body.

    ``source`` is what version history records for changes made through this server.
    """

    def __init__(self, *, name: str, instructions: str, source: str, prompts: bool) -> None:
        super().__init__(name=name, instructions=instructions, stateless=True)
        self.source = source
        self._mcp_server.version = SERVER_VERSION
        # FastMCP registers handlers for every capability; drop the ones this server does not
        # offer so that `initialize` advertises only what exists.
        for request_type in _RESOURCE_REQUESTS + (() if prompts else _PROMPT_REQUESTS):
            self._mcp_server.request_handlers.pop(request_type, None)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            names = [t.name for t in self._tool_manager.list_tools()]
            return error_result(unknown_tool(name, names))
        allowed = tool.parameters.get("properties", {})
        unknown = set(arguments) - set(allowed)
        if unknown:
            # A misspelt parameter would otherwise be dropped silently (REST rejects it too).
            return error_result(unknown_arguments(unknown, allowed).body())
        try:
            result = await self._tool_manager.call_tool(name, arguments, context=self.get_context())
            output_model = tool.fn_metadata.output_model
            if output_model is not None:
                output_model.model_validate(result)
        except Exception as exc:
            return await _error(exc, name)
        return success_result(result)


async def _error(exc: Exception, tool: str) -> types.CallToolResult:
    # In the request's worker thread: a conflict's server_state reads the item's tags.
    try:
        return error_result(await sync_to_async(body_for)(exc, tool))
    except Exception:  # never let internal text reach the client
        logger.exception("MCP tool %s: building the error result failed", tool)
        return error_result(dict(INTERNAL_ERROR))


content_server = TiddlyMCP(
    name="tiddly-content", instructions=instructions.CONTENT, source="mcp-content", prompts=False
)
prompt_server = TiddlyMCP(
    name="tiddly-prompts", instructions=instructions.PROMPTS, source="mcp-prompts", prompts=True
)
