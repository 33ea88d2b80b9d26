"""The two MCP servers: django-mcp-server ``DjangoMCP`` instances, one per endpoint (SPEC §7).

Tools are declared as ``MCPToolset`` classes in ``content_tools`` and ``prompt_tools`` and bound to
these servers; the prompts capability of the Prompt server is in ``prompt_capability``. The URL
conf mounts each server with ``McpView.as_view(mcp_server=…)``.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from mcp import types
from mcp_server.djangomcp import DjangoMCP, django_request_ctx

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
from tiddly.errors import Forbidden, ValidationFailed
from tiddly.scopes import Area, require_scope, scopes_of
from tiddly.serializers import printable, text_problem

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

    ``source`` is what version history records for changes made through this server, and
    ``area`` the scope area (SPEC §8.1) of its tools: a tool annotated ``readOnlyHint`` needs
    ``<area>:read``, any other ``<area>:write``. That one rule, checked here before any tool
    runs (and by the transport to filter ``tools/list``), covers every tool a toolset declares.
    """

    def __init__(
        self, *, name: str, instructions: str, source: str, area: Area, prompts: bool
    ) -> None:
        super().__init__(name=name, instructions=instructions, stateless=True)
        self.source = source
        self.area = area
        self._mcp_server.version = SERVER_VERSION
        # FastMCP registers handlers for every capability; drop the ones this server does not
        # offer so that `initialize` advertises only what exists.
        for request_type in _RESOURCE_REQUESTS + (() if prompts else _PROMPT_REQUESTS):
            self._mcp_server.request_handlers.pop(request_type, None)

    def scope_for(self, annotations: types.ToolAnnotations | None) -> str:
        """The scope a tool with these annotations needs on this server."""
        read_only = annotations is not None and annotations.readOnlyHint is True
        return f"{self.area}:{'read' if read_only else 'write'}"

    def may_use(self, principal: Any, annotations: types.ToolAnnotations | None) -> bool:
        return self.scope_for(annotations) in scopes_of(principal)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            names = [t.name for t in self._tool_manager.list_tools()]
            return error_result(unknown_tool(printable(name), names))
        try:
            require_scope(django_request_ctx.get().auth, self.scope_for(tool.annotations))
        except Forbidden as exc:
            return error_result(exc.body())
        allowed = tool.parameters.get("properties", {})
        unknown = set(arguments) - set(allowed)
        if unknown:
            # A misspelt parameter would otherwise be dropped silently (REST rejects it too).
            shown = {printable(key) for key in unknown}
            return error_result(unknown_arguments(shown, allowed).body())
        problems = text_problems(arguments)
        if problems:
            # Text the database cannot hold would fail deep in a service (PostgreSQL: a 500).
            return error_result(ValidationFailed(problems).body())
        try:
            result = await self._tool_manager.call_tool(name, arguments, context=self.get_context())
            output_model = tool.fn_metadata.output_model
            if output_model is not None:
                output_model.model_validate(result)
        except Exception as exc:
            return await _error(exc, name)
        return success_result(result)


def text_problems(value: Any, path: str = "", *, allow_nul: bool = False) -> dict[str, list[str]]:
    """Every string (and key) in a tool's arguments that is not storable text, by field path."""
    found: dict[str, list[str]] = {}
    if isinstance(value, str):
        problem = text_problem(value, allow_nul=allow_nul)
        if problem:
            found[path or "arguments"] = [problem]
    elif isinstance(value, dict):
        for key, child in value.items():
            inner = f"{path}.{printable(str(key))}" if path else printable(str(key))
            key_problem = text_problem(str(key), allow_nul=allow_nul)
            if key_problem:
                found[inner] = [key_problem]
            found.update(text_problems(child, inner, allow_nul=allow_nul))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            inner = f"{path}.{index}" if path else str(index)
            found.update(text_problems(child, inner, allow_nul=allow_nul))
    return found


async def _error(exc: Exception, tool: str) -> types.CallToolResult:
    # In the request's worker thread: a conflict's server_state reads the item's tags.
    try:
        return error_result(await sync_to_async(body_for)(exc, tool))
    except Exception:  # never let internal text reach the client
        logger.exception("MCP tool %s: building the error result failed", tool)
        return error_result(dict(INTERNAL_ERROR))


content_server = TiddlyMCP(
    name="tiddly-content",
    instructions=instructions.CONTENT,
    source="mcp-content",
    area="content",
    prompts=False,
)
prompt_server = TiddlyMCP(
    name="tiddly-prompts",
    instructions=instructions.PROMPTS,
    source="mcp-prompts",
    area="prompts",
    prompts=True,
)
