"""The JSON-RPC request path of the MCP servers: direct, in-process.

The SDK's streamable-HTTP transport answers a POST by building a session manager, a transport,
a server session and their memory streams and task groups — several milliseconds per call
before any tool runs. In stateless JSON-response mode all of that is bookkeeping: a POST carries
one JSON-RPC message and gets one JSON answer. So this module validates the message with the
SDK's own pydantic types, answers ``initialize``/``ping`` as ``ServerSession`` does, and hands
every other request to the handler the server registered on its low-level ``Server`` (its
public ``request_handlers``: ``TiddlyServer.list_tools``/``call_tool``, the prompts handlers,
any capability added later). Handlers and tools read the caller from ``mcp_bridge.calls``.
A tool result that already holds its JSON (``JsonToolResult``) is written from it, so a 10 MB item
is serialised once for the text block and reused for ``structuredContent``.

HTTP behaviour follows the SDK transport: 406 without ``application/json`` in Accept, 415 for a
non-JSON body, 400 for unparsable JSON, an invalid message or an unsupported
``MCP-Protocol-Version``, 202 for notifications, JSON-RPC errors with HTTP 200 (``-32601`` for a
method MCP does not define or this server does not offer).

Scopes (SPEC §8.1): ``tools/list`` lists only the tools the caller's scopes allow
(``TiddlyServer.may_use``); calling another one is refused by ``TiddlyServer.call_tool``.
"""

from __future__ import annotations

import json
import typing
from typing import Any

import pydantic_core
from asgiref.sync import async_to_sync
from django.http import HttpResponse
from mcp import types
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import McpError
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcp_bridge import calls
from mcp_bridge.results import JsonToolResult, error_result, logger, throttled_body
from mcp_bridge.servers import TiddlyServer, text_problems
from tiddly.errors import ValidationFailed

JSON = "application/json"
PROTOCOL_HEADER = "MCP-Protocol-Version"
DEFAULT_PROTOCOL = "2025-03-26"  # what the SDK assumes when the header is absent

_init_options: dict[int, InitializationOptions] = {}


def handle(
    server: TiddlyServer, request: Any, *, throttled_for: float | None = None
) -> HttpResponse:
    """Answer one streamable-HTTP POST (``request`` is the authenticated DRF request).

    ``throttled_for``: the caller is over its budget for this ``tools/call`` (seconds to wait);
    the call is answered with a ``throttled`` isError result instead of running."""
    problem = _check_headers(request)
    if problem is not None:
        return problem
    try:
        raw = parsed_body(request)
    except ValueError as exc:
        return _rpc_error(None, types.PARSE_ERROR, f"Parse error: {exc}", status=400)
    if not isinstance(raw, dict):
        return _rpc_error(None, types.INVALID_REQUEST, "Send one JSON-RPC message.", status=400)
    if not _encodable(raw.get("id")):
        # The answer must echo the id, and this one cannot be written as UTF-8 (a lone
        # surrogate): refuse before anything runs, so a retry cannot make a duplicate (SPEC §7).
        return _rpc_error(
            None,
            types.INVALID_REQUEST,
            "Invalid request id: it cannot be encoded (a lone surrogate). Send a number or a "
            "string of valid Unicode.",
            status=400,
        )
    try:
        message = types.JSONRPCMessage.model_validate(raw).root
    except ValidationError:
        request_id = raw.get("id")
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            request_id = None  # not an id JSON-RPC allows: unreadable
        return _rpc_error(
            request_id, types.INVALID_REQUEST, "Not a valid JSON-RPC 2.0 message.", status=400
        )
    if not isinstance(message, types.JSONRPCRequest):
        return HttpResponse(status=202)  # notifications and responses need no answer
    if message.method != "initialize":
        version = request.headers.get(PROTOCOL_HEADER, DEFAULT_PROTOCOL)
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            return _plain_error(
                f"Bad Request: Unsupported protocol version: {version}. Supported versions: "
                f"{', '.join(SUPPORTED_PROTOCOL_VERSIONS)}",
                status=400,
            )
    with calls.bind(server, request):
        body = _answer(server, message.id, raw, throttled_for)
    return HttpResponse(body, content_type=JSON)


def _encodable(request_id: Any) -> bool:
    if not isinstance(request_id, str):
        return True
    try:
        request_id.encode()
    except UnicodeEncodeError:
        return False
    return True


def parsed_body(request: Any) -> Any:
    """The JSON body, parsed once per request (throttling reads it first); ValueError if bad."""
    cached = getattr(request, "_mcp_body", None)
    if cached is None:
        try:
            cached = (_from_json(request.body), None)
        except ValueError as exc:
            cached = (None, exc)
        request._mcp_body = cached
    value, error = cached
    if error is not None:
        raise error
    return value


def _from_json(body: bytes) -> Any:
    try:
        return pydantic_core.from_json(body)
    except ValueError:
        # pydantic refuses "\ud800" (a lone surrogate), which is valid JSON: parse it with the
        # standard library so the argument can be answered as a validation_error, as on REST.
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            pass
        raise


def _check_headers(request: Any) -> HttpResponse | None:
    accept = [part.strip() for part in request.headers.get("Accept", "").split(",")]
    if not any(part.startswith(JSON) for part in accept):
        return _plain_error("Not Acceptable: Client must accept application/json", status=406)
    content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
    if content_type != JSON:
        return _plain_error(
            "Unsupported Media Type: Content-Type must be application/json", status=415
        )
    return None


def _answer(
    server: TiddlyServer, request_id: Any, raw: dict[str, Any], throttled_for: float | None
) -> bytes:
    """The answer's bytes; in the request's worker thread (``calls`` bound)."""
    if raw.get("method") not in CLIENT_METHODS:
        return _error_bytes(request_id, types.METHOD_NOT_FOUND, "Method not found")
    try:
        client_request = types.ClientRequest.model_validate(raw).root
    except ValidationError:
        return _error_bytes(request_id, types.INVALID_PARAMS, "Invalid request parameters")
    if throttled_for is not None and isinstance(client_request, types.CallToolRequest):
        return _result_bytes(request_id, error_result(throttled_body(throttled_for)))
    if not isinstance(client_request, types.CallToolRequest):
        # Tools answer bad text themselves (an isError validation_error, servers.text_problems).
        # NUL is fine here: prompt argument values are rendered, not stored (as on REST), and a
        # name with NUL matches no prompt. A lone surrogate cannot even be encoded.
        problems = text_problems(raw.get("params"), allow_nul=True)
        if problems:
            body = ValidationFailed(problems).body()
            return _error_bytes(request_id, types.INVALID_PARAMS, body["message"], body)
    try:
        if isinstance(client_request, types.CallToolRequest):
            # Tools are sync: run it right here, in the request's worker thread. Through the
            # async handler it would cost four thread hand-offs (to the event loop and back to
            # this thread for the ORM), a millisecond or more each on a busy machine.
            params = client_request.params
            result: types.Result = server.run_tool(params.name, params.arguments or {})
        else:
            result = async_to_sync(_dispatch)(server, client_request)
    except McpError as exc:
        return _error_bytes(request_id, exc.error.code, exc.error.message, exc.error.data)
    except Exception:
        logger.exception("MCP request %s failed", client_request.method)
        return _error_bytes(request_id, types.INTERNAL_ERROR, "Internal error")
    return _result_bytes(request_id, result)


async def _dispatch(server: TiddlyServer, request: Any) -> types.Result:
    if isinstance(request, types.InitializeRequest):
        return _initialize(server, request.params)
    if isinstance(request, types.PingRequest):
        return types.EmptyResult()
    handler = server.lowlevel.request_handlers.get(type(request))
    if handler is None:
        raise McpError(types.ErrorData(code=types.METHOD_NOT_FOUND, message="Method not found"))
    result = await handler(request)
    if isinstance(result, types.ErrorData):  # pragma: no cover - handlers raise instead
        raise McpError(result)
    return result.root


def _client_methods() -> frozenset[str]:
    """Every request method MCP defines for clients (from the SDK's ``ClientRequest`` union)."""
    members = typing.get_args(types.ClientRequest.model_fields["root"].annotation)
    return frozenset(
        typing.get_args(member.model_fields["method"].annotation)[0] for member in members
    )


CLIENT_METHODS = _client_methods()


def _initialize(
    server: TiddlyServer, params: types.InitializeRequestParams
) -> types.InitializeResult:
    options = _init_options.get(id(server))
    if options is None:
        options = _init_options[id(server)] = server.lowlevel.create_initialization_options()
    requested = params.protocolVersion
    return types.InitializeResult(
        protocolVersion=requested
        if requested in SUPPORTED_PROTOCOL_VERSIONS
        else types.LATEST_PROTOCOL_VERSION,
        capabilities=options.capabilities,
        serverInfo=types.Implementation(
            name=options.server_name,
            version=options.server_version,
            websiteUrl=options.website_url,
            icons=options.icons,
        ),
        instructions=options.instructions,
    )


def _result_bytes(request_id: Any, result: types.Result) -> bytes:
    if isinstance(result, JsonToolResult) and result.encoded:
        # Same bytes as the generic path, from the JSON the tool result already holds.
        return b"".join(
            (
                b'{"jsonrpc":"2.0","id":',
                pydantic_core.to_json(request_id),
                b',"result":{"content":[{"type":"text","text":',
                pydantic_core.to_json(result.text),
                b'}],"structuredContent":',
                result.encoded,
                b',"isError":',
                b"true" if result.isError else b"false",
                b"}}",
            )
        )
    response = types.JSONRPCResponse(
        jsonrpc="2.0",
        id=request_id,
        result=result.model_dump(by_alias=True, mode="json", exclude_none=True),
    )
    return response.model_dump_json(by_alias=True, exclude_none=True).encode()


def _error_bytes(request_id: Any, code: int, message: str, data: Any = None) -> bytes:
    """A JSON-RPC error; ``request_id`` None is written ``"id": null`` (JSON-RPC 2.0 §5: the id
    could not be read), which the SDK's ``JSONRPCError`` model cannot hold."""
    error = types.ErrorData(code=code, message=message, data=data)
    return b"".join(
        (
            b'{"jsonrpc":"2.0","id":',
            pydantic_core.to_json(request_id),
            b',"error":',
            error.model_dump_json(by_alias=True, exclude_none=True).encode(),
            b"}",
        )
    )


def _rpc_error(request_id: Any, code: int, message: str, *, status: int) -> HttpResponse:
    body = _error_bytes(request_id, code, message)
    return HttpResponse(body, status=status, content_type=JSON)


def _plain_error(message: str, *, status: int) -> HttpResponse:
    return _rpc_error(None, types.INVALID_REQUEST, message, status=status)
