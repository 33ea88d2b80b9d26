"""The streamable-HTTP endpoint of an MCP server: a DRF view.

- GET answers 405: the servers are stateless and offer no SSE stream (the MCP spec allows 405
  then, and clients handle it).
- DELETE answers 405 too: there is no session to end.
- POST goes through ``transport.handle``: a direct JSON-RPC path to the server's handlers.
- Authentication: the DRF classes of ``DJANGO_MCP_AUTHENTICATION_CLASSES`` (the REST API's
  Bearer tokens; the setting keeps the name it had under django-mcp-server, so deployments'
  settings keep working) with ``IsAuthenticated``, so a missing, invalid, expired or revoked
  token is a 401 with ``WWW-Authenticate: Bearer`` before any JSON-RPC is read.
- CSRF-exempt: Bearer tokens only, no cookie session.
- Not part of the REST API's OpenAPI schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.conf import settings
from django.http import HttpResponse, HttpResponseBase, JsonResponse
from django.utils.decorators import method_decorator
from django.utils.module_loading import import_string
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import Throttled
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from mcp_bridge import transport
from mcp_bridge.servers import TiddlyServer
from mcp_bridge.throttling import McpReadThrottle, McpWriteThrottle, is_tool_call


def _authentication_classes() -> list[type]:
    return [import_string(path) for path in settings.DJANGO_MCP_AUTHENTICATION_CLASSES]


@extend_schema(exclude=True)
@method_decorator(csrf_exempt, name="dispatch")
class McpView(APIView):
    mcp_server: ClassVar[TiddlyServer]  # set per endpoint by endpoint()
    authentication_classes = _authentication_classes()
    permission_classes = [IsAuthenticated]
    throttle_classes = [McpReadThrottle, McpWriteThrottle]

    # Seconds to wait when this request is a tools/call over the caller's budget (SPEC §7: the
    # agent gets an isError ``throttled`` result, not an HTTP 429 its client reports as a
    # transport failure). Any other message over budget is still a 429.
    throttled_for: float | None = None

    def check_throttles(self, request: Request) -> None:
        try:
            super().check_throttles(request)
        except Throttled as exc:
            if not is_tool_call(request):
                raise
            self.throttled_for = getattr(exc, "wait", None) or 1.0

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = super().dispatch(request, *args, **kwargs)
        # DRF leaves this view, its Request and the response in reference cycles
        # (view.request <-> request.parser_context["view"], view.response): broken here. Django's
        # ASGI handler still links the response into cycles of its own (the disconnect
        # listener's exception and frames), so after a large answer tiddly.middleware collects.
        drf_request = self.__dict__.pop("request", None)
        if drf_request is not None:
            drf_request.__dict__.pop("parser_context", None)
        self.__dict__.pop("response", None)
        return response

    def get_throttles(self) -> list[BaseThrottle]:
        # Throttling is on exactly when the REST API's is (TIDDLY_THROTTLE_ENABLED).
        if not api_settings.DEFAULT_THROTTLE_CLASSES:
            return []
        return super().get_throttles()

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # The transport checks Accept itself (406 with an MCP message); a GET for an SSE stream
        # (Accept: text/event-stream only) must reach get() and its 405, not DRF's 406.
        return super().perform_content_negotiation(request, force=True)

    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        return self._not_allowed()

    def delete(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        return self._not_allowed()

    def post(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        return transport.handle(self.mcp_server, request, throttled_for=self.throttled_for)

    def _not_allowed(self) -> HttpResponse:
        self.headers["Allow"] = "POST"  # DRF writes self.headers over the response's
        return JsonResponse(
            {
                "error": "method_not_allowed",
                "message": "This MCP server is stateless and offers no SSE stream: send each "
                "JSON-RPC message as a POST (streamable HTTP).",
            },
            status=405,
        )


def endpoint(server: TiddlyServer) -> Callable[..., HttpResponse]:
    """The view serving one MCP server."""

    class ServerView(McpView):
        mcp_server = server

    return ServerView.as_view()
