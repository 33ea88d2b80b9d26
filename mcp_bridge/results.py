"""Tool results as MCP ``CallToolResult``s: the REST JSON as text and structuredContent (SPEC §7).

Success: the object a tool returns, exactly as REST would send it. Failure (``isError: true``):
a service raised a ``TiddlyError`` whose ``body()`` is exactly what REST sends with the 4xx, so
``matches``, ``suggestion`` and ``server_state`` reach the agent in both forms; argument
validation failures get the REST ``validation_error`` shape. Anything unexpected is logged here
and answered with a generic message: no traceback or internal text leaves the server.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import pydantic_core
from mcp import types
from mcp.shared.exceptions import McpError
from pydantic import PrivateAttr, ValidationError

from tiddly.errors import TiddlyError, ValidationFailed

logger = logging.getLogger("mcp_bridge")

INTERNAL_ERROR = {
    "error": "server_error",
    "message": "Internal error; nothing was saved. Retry the call; if it keeps failing, report it.",
}


def internal_error(what: str) -> McpError:
    """The JSON-RPC error for an unexpected failure of ``what`` (logged here, with the traceback
    of the exception being handled): a generic message, nothing internal."""
    logger.exception("MCP %s request failed", what)
    return McpError(
        types.ErrorData(
            code=types.INTERNAL_ERROR, message=INTERNAL_ERROR["message"], data=INTERNAL_ERROR
        )
    )


class JsonToolResult(types.CallToolResult):
    """A CallToolResult whose one text block is ``structuredContent`` as JSON.

    Keeps that JSON (``encoded``) so the direct transport can write the response without
    serialising the object a second time: for a 10 MB item, a full ``model_dump`` of the result
    costs as much as the tool itself. To pydantic it is an ordinary ``CallToolResult``.
    """

    _encoded: bytes = PrivateAttr(default=b"")

    @property
    def encoded(self) -> bytes:
        return self._encoded

    @property
    def text(self) -> str:
        block = self.content[0]
        assert isinstance(block, types.TextContent)
        return block.text


def success_result(data: dict[str, Any]) -> types.CallToolResult:
    return _result(data, is_error=False)


def error_result(body: dict[str, Any]) -> types.CallToolResult:
    return _result(body, is_error=True)


def _result(data: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    encoded = pydantic_core.to_json(data)
    result = JsonToolResult(
        content=[types.TextContent(type="text", text=encoded.decode())],
        structuredContent=data,
        isError=is_error,
    )
    result._encoded = encoded
    return result


def body_for(exc: BaseException, tool: str) -> dict[str, Any]:
    """The REST error object for whatever a tool raised (walks ``ToolError`` causes)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, TiddlyError):
            return cause.body()
        if isinstance(cause, ValidationError) and cause.title.endswith("Arguments"):
            return invalid_arguments(cause).body()
        cause = cause.__cause__
    logger.error("MCP tool %s failed", tool, exc_info=exc)
    return dict(INTERNAL_ERROR)


def invalid_arguments(exc: ValidationError) -> ValidationFailed:
    fields: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False, include_input=False):
        name = ".".join(str(part) for part in error["loc"]) or "arguments"
        fields.setdefault(name, []).append(error["msg"])
    return ValidationFailed(fields)


def unknown_arguments(unknown: Iterable[str], allowed: Iterable[str]) -> ValidationFailed:
    valid = ", ".join(sorted(allowed)) or "(none)"
    return ValidationFailed(
        {name: [f"Unknown argument. Valid arguments: {valid}."] for name in sorted(unknown)}
    )


def unknown_tool(name: str, available: Iterable[str]) -> dict[str, Any]:
    return {
        "error": "not_found",
        "message": f"Unknown tool '{name}'. Available tools: {', '.join(available)}.",
    }


def throttled_body(wait: float) -> dict[str, Any]:
    """The REST ``throttled`` error (SPEC §8) with ``retry_after`` in whole seconds (SPEC §7)."""
    seconds = max(1, int(wait + 0.999))
    return {
        "error": "throttled",
        "message": f"Too many requests. Retry in {seconds} seconds.",
        "retry_after": seconds,
    }
