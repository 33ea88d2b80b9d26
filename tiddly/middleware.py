"""Free each request's data as soon as its response is sent.

DRF links the view, its Request and its Response in reference cycles (``response.
renderer_context["view"]``, ``view.response``, ``request.parser_context["view"]``), and asyncio
tasks and exception tracebacks add more. Objects in a cycle wait for Python's cyclic garbage
collector, which runs by object count, not by size — so a 6 MB note's body, parsed data, item and
rendered JSON stayed resident across many requests and the server's memory grew to several times
its working set. When the response is closed this breaks the DRF links (a large body's as soon as
it is rendered: the data it came from need not live while it is sent), and after a request that
moved a large payload it runs the collector — cheap, because ``tiddly.asgi`` freezes everything
that exists at start-up out of the collector's reach (``gc.freeze``). Every view gets it: under
ASGI, Django's handler itself leaves the response in a cycle (its disconnect listener's exception
and frames), so a view that breaks its own cycles still kept a multi-megabyte MCP answer until the
next automatic collection.

It also lets only ``TIDDLY_LARGE_REQUESTS_AT_ONCE`` requests with a large body run at once in
this process. Django keeps a large body in a temporary file until a view reads it; eight
concurrent creates of a 6 MB note otherwise each held the body, its parsed JSON and the rendered
answer at the same time, while SQLite wrote them one after another anyway. A GET whose last
answer from this process was large, or which read a long content (a 6 MB note's read or a
search in it), takes a turn the same way: eight concurrent reads of one long note otherwise each
held its text, SQLite's copy and the rendered body at once.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase, JsonResponse

from tiddly.memory import give_back_heap, took_long_read

LARGE_PAYLOAD_BYTES = 1_000_000
# Free heap a process may keep between requests (tiddly.memory).
FREE_HEAP_BYTES = 16 * 1024 * 1024
# After a large answer to a small request, the free heap counted from zero is handed back at most
# this often (seconds); what a request freed beyond FREE_HEAP_BYTES goes at once.
RELEASE_EVERY_SECONDS = 0.5
# A large request waits at most this long for its turn, then is told to retry.
LARGE_REQUEST_WAIT_SECONDS = 60.0

# GETs (path and query) whose last answer was large, least recently seen dropped first.
LARGE_ANSWERS_REMEMBERED = 256

_gate_lock = threading.Lock()
_gate: tuple[int, threading.BoundedSemaphore] | None = None
_large_answers: OrderedDict[str, None] = OrderedDict()


def _large_request_gate() -> threading.BoundedSemaphore | None:
    """The process's semaphore for large requests (None: no limit), made again if the setting
    changed (tests override it)."""
    global _gate
    size = settings.TIDDLY_LARGE_REQUESTS_AT_ONCE
    if size <= 0:
        return None
    with _gate_lock:
        if _gate is None or _gate[0] != size:
            _gate = (size, threading.BoundedSemaphore(size))
        return _gate[1]


class ReleaseRequestDataMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        took_long_read()  # this thread's last request may have left it set
        gate = _large_request_gate() if _expect_large(request) else None
        if gate is None:
            response = self.get_response(request)
        elif not gate.acquire(timeout=LARGE_REQUEST_WAIT_SECONDS):
            return _busy()
        else:
            try:
                response = self.get_response(request)
            finally:
                gate.release()
        large = _is_large(request, response)
        # A read of a long content is as large while it runs, however short its answer.
        _remember_answer(request, response, large or took_long_read())
        if large:
            # The body is rendered: what it was rendered from need not wait for the sending.
            _unlink(response)
        # A large answer to a small request (a long note read) leaves the heap as it found it
        # but for the answer: what was handed back before need not go again at every read.
        every = 0.0 if _received(request) >= LARGE_PAYLOAD_BYTES else RELEASE_EVERY_SECONDS
        # close() runs the closers after the body is sent, then clears the list.
        response._resource_closers.append(  # type: ignore[attr-defined]
            lambda: _release(response, collect=large, every=every)
        )
        return response


def _received(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _expect_large(request: HttpRequest) -> bool:
    if _received(request) >= LARGE_PAYLOAD_BYTES:
        return True
    if request.method != "GET":
        return False
    with _gate_lock:
        return request.get_full_path() in _large_answers


def _remember_answer(request: HttpRequest, response: HttpResponseBase, large: bool) -> None:
    if request.method != "GET":
        return
    key = request.get_full_path()
    with _gate_lock:
        if not large:
            _large_answers.pop(key, None)
            return
        _large_answers[key] = None
        _large_answers.move_to_end(key)
        while len(_large_answers) > LARGE_ANSWERS_REMEMBERED:
            _large_answers.popitem(last=False)


def _is_large(request: HttpRequest, response: HttpResponseBase) -> bool:
    sent = len(getattr(response, "content", b"")) if not response.streaming else 0
    return max(_received(request), sent) >= LARGE_PAYLOAD_BYTES


def _busy() -> JsonResponse:
    response = JsonResponse(
        {
            "error": "busy",
            "message": (
                "The server is handling other large requests (bodies or answers of 1 MB or "
                "more, or reads of long notes) and this one waited "
                f"{LARGE_REQUEST_WAIT_SECONDS:.0f} s for its turn. Nothing was changed: send it "
                "again shortly."
            ),
        },
        status=503,
    )
    response["Retry-After"] = "5"
    return response


def _release(response: Any, *, collect: bool, every: float = 0.0) -> None:
    _unlink(response)
    if collect:
        gc.collect()
    give_back_heap(FREE_HEAP_BYTES, only_new=not collect, every=every)


def _unlink(response: Any) -> None:
    """Break DRF's links between the view, its request and the response, and drop the
    response's data (its body is rendered)."""
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
