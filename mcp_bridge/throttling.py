"""Per-user throttling of MCP calls with the REST API's read and write budgets (SPEC §8).

Every MCP message is a POST, so the REST throttles (which go by HTTP method) would count every
read as a write. These classify by what the message does: ``tools/call`` of a tool without
``readOnlyHint`` is a write, everything else a read. The cache keys are the REST throttles', so a
user's budget is shared across REST and both MCP servers.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import UserRateThrottle

from mcp_bridge.transport import parsed_body


def _tool_call(request: Request) -> dict[str, Any] | None:
    try:
        message = parsed_body(request)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    return message


def is_tool_call(request: Request) -> bool:
    return _tool_call(request) is not None


def is_write(request: Request, view: Any) -> bool:
    message = _tool_call(request)
    if message is None:
        return False
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return not (isinstance(name, str) and view.mcp_server.is_read_only(name))


class _McpThrottle(UserRateThrottle):
    def __init__(self) -> None:
        # DRF binds the rates to the class at import; follow the current settings instead.
        # (str(): the stubs type the setting's rates as numbers; DRF stores "N/period" strings.)
        rates = api_settings.DEFAULT_THROTTLE_RATES
        self.THROTTLE_RATES = {k: None if v is None else str(v) for k, v in rates.items()}
        super().__init__()


class McpReadThrottle(_McpThrottle):
    scope = "read"

    def allow_request(self, request: Request, view: Any) -> bool:
        return is_write(request, view) or super().allow_request(request, view)


class McpWriteThrottle(_McpThrottle):
    scope = "write"

    def allow_request(self, request: Request, view: Any) -> bool:
        return not is_write(request, view) or super().allow_request(request, view)
