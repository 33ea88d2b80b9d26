"""Free each request's data as soon as its response is sent.

DRF links the view, its Request and its Response in reference cycles (``response.
renderer_context["view"]``, ``view.response``, ``request.parser_context["view"]``), and asyncio
tasks and exception tracebacks add more. Objects in a cycle wait for Python's cyclic garbage
collector, which runs by object count, not by size — so a 6 MB note's body, parsed data, item and
rendered JSON stayed resident across many requests and the server's memory grew to several times
its working set. When the response is closed this breaks the DRF links, and after a request that
moved a large payload it runs the collector — cheap, because ``tiddly.asgi`` freezes everything
that exists at start-up out of the collector's reach (``gc.freeze``). A view that breaks its own
cycles before returning marks its response ``holds_no_cycles`` and is spared the collection
(reference counting frees its data as soon as the response is sent).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponseBase

LARGE_PAYLOAD_BYTES = 1_000_000


class ReleaseRequestDataMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        large = _is_large(request, response) and not getattr(response, "holds_no_cycles", False)
        # close() runs the closers after the body is sent, then clears the list.
        response._resource_closers.append(lambda: _release(response, collect=large))  # type: ignore[attr-defined]
        return response


def _is_large(request: HttpRequest, response: HttpResponseBase) -> bool:
    try:
        received = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        received = 0
    sent = len(getattr(response, "content", b"")) if not response.streaming else 0
    return max(received, sent) >= LARGE_PAYLOAD_BYTES


def _release(response: Any, *, collect: bool) -> None:
    context = response.__dict__.pop("renderer_context", None) or {}
    view = context.get("view")
    drf_request = context.get("request")
    if view is not None:
        for name in ("request", "response", "args", "kwargs", "headers", "format_kwarg"):
            view.__dict__.pop(name, None)
    if drf_request is not None:
        for name in ("parser_context", "_data", "_full_data"):
            drf_request.__dict__.pop(name, None)
    if hasattr(response, "data"):
        response.data = None
    if collect:
        gc.collect()
