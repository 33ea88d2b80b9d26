"""An MCP server of Tiddly: the official SDK's low-level ``Server`` plus our own tool registry.

Why not django-mcp-server or FastMCP any more: django-mcp-server's toolsets and FastMCP's tool
manager cannot declare titles, annotations, tool order or output schemas the way SPEC §7 needs,
so they were patched through private attributes (``_tool_manager._tools``,
``_mcp_server.request_handlers``) — and a capability that changes per request (prompts, soon
resources) fits neither. So each server keeps its own ``dict`` of tools and registers its
handlers on an ``mcp.server.lowlevel.Server`` through its public decorators (``list_tools``,
``call_tool``, ``list_prompts``, …); the SDK derives the advertised capabilities from the
handlers present, so a server advertises exactly what it registered. A tool's input and output
schemas and its argument validation come from the SDK's public ``func_metadata`` (what FastMCP's
``add_tool`` uses), so schemas are the same as FastMCP would publish.

Adding a capability (resources, say): write the handlers (async; do ORM work in
``sync_to_async``; read the caller with ``mcp_bridge.calls``) and register them on
``server.lowlevel`` with the SDK's decorators, as ``prompt_capability.register`` does:
``server.lowlevel.list_resources()(fn)``, ``.list_resource_templates()(fn)``,
``.read_resource()(fn)``. The transport dispatches every request type the low-level server has
a handler for, and ``initialize`` then advertises ``resources``.

Results are exactly the REST JSON (SPEC §3.4, §7): ``call_tool`` builds the ``CallToolResult``
itself (the SDK's conversion would pad structuredContent with ``null`` for every
``NotRequired`` key and re-validate it with jsonschema), and failures become ``isError`` results
with the REST error body. ``area`` is the scope area (SPEC §8.1) of the server's tools: a tool
annotated ``readOnlyHint`` needs ``<area>:read``, any other ``<area>:write`` — one rule, checked
before any tool runs, and used to filter ``tools/list``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from mcp import types
from mcp.server.fastmcp.utilities.func_metadata import FuncMetadata, func_metadata
from mcp.server.lowlevel import Server
from pydantic import ValidationError

from mcp_bridge import calls
from mcp_bridge.output_schemas import admitting_errors, lean_schema
from mcp_bridge.results import (
    INTERNAL_ERROR,
    body_for,
    error_result,
    invalid_arguments,
    logger,
    success_result,
    unknown_arguments,
    unknown_tool,
)
from tiddly import __version__
from tiddly.errors import Forbidden, ValidationFailed
from tiddly.scopes import Area, require_scope, scopes_of
from tiddly.serializers import printable, text_problem

SERVER_VERSION = __version__


@dataclass(frozen=True)
class RegisteredTool:
    """A tool: the function that runs it, what ``tools/list`` shows, how arguments validate."""

    fn: Callable[..., Any]
    listing: types.Tool
    metadata: FuncMetadata

    @property
    def name(self) -> str:
        return self.listing.name

    @property
    def annotations(self) -> types.ToolAnnotations | None:
        return self.listing.annotations


class TiddlyServer:
    """One MCP endpoint: its instructions, tools and handlers (see the module docstring).

    ``source`` is what version history records for changes made through this server; ``types``
    the item types its search and overview tools cover; ``context_footer`` what ``get_context``
    suggests next.
    """

    def __init__(
        self,
        *,
        name: str,
        instructions: str,
        source: str,
        area: Area,
        types: list[str],
        context_footer: str,
    ) -> None:
        self.name = name
        self.source = source
        self.area = area
        self.types = types
        self.context_footer = context_footer
        self.tools: dict[str, RegisteredTool] = {}
        self.lowlevel: Server[Any, Any] = Server(
            name, version=SERVER_VERSION, instructions=instructions
        )
        self.lowlevel.list_tools()(self.list_tools)
        self.lowlevel.call_tool(validate_input=False)(self.call_tool)

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        title: str,
        annotations: types.ToolAnnotations,
        description: str | None = None,
    ) -> None:
        """Register a sync tool function: its name is the tool's name, its typed parameters
        the input schema, its TypedDict return the output schema; the description is
        ``description`` or its docstring."""
        name = fn.__name__
        if name in self.tools:
            raise RuntimeError(f"{self.name}: tool {name} registered twice")
        metadata = func_metadata(fn, structured_output=True)
        output = metadata.output_schema
        self.tools[name] = RegisteredTool(
            fn=fn,
            metadata=metadata,
            listing=types.Tool(
                name=name,
                title=title,
                description=inspect.cleandoc(description or fn.__doc__ or ""),
                inputSchema=metadata.arg_model.model_json_schema(by_alias=True),
                outputSchema=None if output is None else admitting_errors(lean_schema(output)),
                annotations=annotations,
            ),
        )

    def scope_for(self, annotations: types.ToolAnnotations | None) -> str:
        """The scope a tool with these annotations needs on this server."""
        read_only = annotations is not None and annotations.readOnlyHint is True
        return f"{self.area}:{'read' if read_only else 'write'}"

    def may_use(self, principal: Any, annotations: types.ToolAnnotations | None) -> bool:
        return self.scope_for(annotations) in scopes_of(principal)

    def is_read_only(self, name: str) -> bool:
        tool = self.tools.get(name)
        hints = None if tool is None else tool.annotations
        return hints is not None and hints.readOnlyHint is True

    async def list_tools(self, request: types.ListToolsRequest) -> types.ListToolsResult:
        """The tools the caller's scopes allow, in registration order (SPEC §7, §8.1)."""
        principal = calls.principal()
        return types.ListToolsResult(
            tools=[
                tool.listing
                for tool in self.tools.values()
                if self.may_use(principal, tool.annotations)
            ]
        )

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """The ``tools/call`` handler of the low-level server (``run_tool`` in a worker thread;
        the transport calls ``run_tool`` directly, being in one already)."""
        return await sync_to_async(self.run_tool)(name, arguments)

    def run_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Everything a call is: scope, argument checks, the tool, its result or error (sync:
        the ORM is; ``calls`` must be bound)."""
        tool = self.tools.get(name)
        if tool is None:
            return error_result(unknown_tool(printable(name), list(self.tools)))
        try:
            require_scope(calls.principal(), self.scope_for(tool.annotations))
        except Forbidden as exc:
            return error_result(exc.body())
        allowed = tool.listing.inputSchema.get("properties", {})
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
            parsed = tool.metadata.arg_model.model_validate(tool.metadata.pre_parse_json(arguments))
        except ValidationError as exc:
            return error_result(invalid_arguments(exc).body())
        try:
            result = tool.fn(**parsed.model_dump_one_level())
            if tool.metadata.output_model is not None:
                tool.metadata.output_model.model_validate(result)
        except Exception as exc:
            return _error(exc, name)
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


def _error(exc: Exception, tool: str) -> types.CallToolResult:
    # In the request's worker thread: a conflict's server_state reads the item's tags.
    try:
        return error_result(body_for(exc, tool))
    except Exception:  # never let internal text reach the client
        logger.exception("MCP tool %s: building the error result failed", tool)
        return error_result(dict(INTERNAL_ERROR))
