"""The middleware that frees a request's data when its response is closed."""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

import pytest
from django.http import HttpResponse
from django.test import RequestFactory
from rest_framework.response import Response

from tiddly import middleware
from tiddly.memory import LONG_READ_CHARS, note_read

# close() sends request_finished, whose handler closes database connections.
pytestmark = pytest.mark.django_db


class FakeView:
    pass


def _respond(body: bytes, *, content_length: int = 0) -> tuple[Response, FakeView]:
    view = FakeView()
    response = Response({"content": "x"})
    response.content = body
    response.renderer_context = {"view": view, "request": None}
    view.response = response  # the cycle DRF builds
    view.request = object()
    request = RequestFactory().post("/", CONTENT_LENGTH=str(content_length))
    wrapped = middleware.ReleaseRequestDataMiddleware(lambda _: response)(request)
    return wrapped, view


def test_closing_the_response_breaks_the_view_response_cycle() -> None:
    response, view = _respond(b"small")
    response.close()
    assert not hasattr(response, "renderer_context")
    assert response.data is None
    assert "response" not in view.__dict__
    assert "request" not in view.__dict__


def test_a_large_rendered_body_drops_its_data_before_it_is_sent() -> None:
    response, view = _respond(b"x" * 2_000_000)
    assert response.data is None  # not yet closed: the body is still to be sent
    assert "response" not in view.__dict__
    assert response.content == b"x" * 2_000_000
    response.close()
    assert response.data is None


def test_a_small_body_keeps_its_data_until_closed() -> None:
    response, view = _respond(b"small")
    assert response.data == {"content": "x"}
    assert view.response is response
    response.close()
    assert response.data is None


@pytest.mark.parametrize(
    ("body", "content_length", "collects"),
    [(b"x" * 10, 0, False), (b"x" * 2_000_000, 0, True), (b"x", 5_000_000, True)],
)
def test_a_large_payload_in_or_out_runs_the_collector(
    monkeypatch: Any, body: bytes, content_length: int, collects: bool
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(middleware.gc, "collect", lambda: calls.append(1))
    response, _ = _respond(body, content_length=content_length)
    response.close()
    assert calls == ([1] if collects else [])


@pytest.mark.parametrize(
    ("body", "content_length", "only_new", "every"),
    [
        (b"small", 0, True, middleware.RELEASE_EVERY_SECONDS),
        # A large answer to a small request: counted from zero, but not at every read.
        (b"x" * 2_000_000, 0, False, middleware.RELEASE_EVERY_SECONDS),
        # A large body: counted from zero at every request.
        (b"small", 6_000_000, False, 0.0),
    ],
)
def test_every_closed_response_gives_free_heap_back_beyond_the_limit(
    monkeypatch: Any, body: bytes, content_length: int, only_new: bool, every: float
) -> None:
    calls: list[tuple[int, bool, float]] = []

    def give_back(limit: int, *, only_new: bool, every: float) -> bool:
        calls.append((limit, only_new, every))
        return False

    monkeypatch.setattr(middleware, "give_back_heap", give_back)
    response, _ = _respond(body, content_length=content_length)
    assert calls == []
    response.close()
    assert calls == [(middleware.FREE_HEAP_BYTES, only_new, every)]


def _large_post(length: int = 6_000_000) -> Any:
    return RequestFactory().post("/api/notes/", CONTENT_LENGTH=str(length))


def test_large_requests_take_turns(settings: Any) -> None:
    """With room for one, a second large request starts only when the first has answered, and
    a small one never waits."""
    settings.TIDDLY_LARGE_REQUESTS_AT_ONCE = 1
    started: list[str] = []
    release_first = threading.Event()

    def view(request: Any) -> HttpResponse:
        name = request.META["HTTP_X_NAME"]
        started.append(name)
        if name == "first":
            release_first.wait(5)
        return HttpResponse()

    def call(name: str, length: int) -> None:
        request = _large_post(length)
        request.META["HTTP_X_NAME"] = name
        middleware.ReleaseRequestDataMiddleware(view)(request)

    first = threading.Thread(target=call, args=("first", 6_000_000))
    first.start()
    _wait_for(lambda: started == ["first"])
    second = threading.Thread(target=call, args=("second", 6_000_000))
    second.start()
    call("small", 1_000)  # runs at once, beside the first
    time.sleep(0.2)
    assert started == ["first", "small"]
    release_first.set()
    first.join(5)
    second.join(5)
    assert started == ["first", "small", "second"]


def test_a_large_request_that_waits_too_long_is_told_to_retry(
    settings: Any, monkeypatch: Any
) -> None:
    settings.TIDDLY_LARGE_REQUESTS_AT_ONCE = 1
    monkeypatch.setattr(middleware, "LARGE_REQUEST_WAIT_SECONDS", 0.05)
    gate = middleware._large_request_gate()
    assert gate is not None
    assert gate.acquire(timeout=1)
    called: list[int] = []
    try:
        response = middleware.ReleaseRequestDataMiddleware(
            lambda _: called.append(1) or HttpResponse()
        )(_large_post())
    finally:
        gate.release()
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    body = json.loads(response.content)
    assert body["error"] == "busy"
    assert "send it again" in body["message"]
    assert called == []  # the view never ran: nothing changed


def test_no_limit_when_the_setting_is_zero(settings: Any) -> None:
    """With ``0`` a second large request starts while the first is still running."""
    settings.TIDDLY_LARGE_REQUESTS_AT_ONCE = 0
    assert middleware._large_request_gate() is None
    running: list[int] = []
    release = threading.Event()

    def view(_: Any) -> HttpResponse:
        running.append(1)
        release.wait(5)
        return HttpResponse()

    threads = [
        threading.Thread(
            target=middleware.ReleaseRequestDataMiddleware(view), args=(_large_post(),)
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    try:
        _wait_for(lambda: len(running) == 3)
    finally:
        release.set()
        for thread in threads:
            thread.join(5)


def _wait_for(condition: Any, seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_get_whose_last_answer_was_large_takes_a_turn(settings: Any, monkeypatch: Any) -> None:
    """The first read of a long note is not known to be large; the next ones take turns with
    each other (room for one here), while reads of other paths and small answers never wait. An
    answer that became small is forgotten."""
    settings.TIDDLY_LARGE_REQUESTS_AT_ONCE = 1
    path = f"/api/notes/{uuid.uuid4().hex}/"
    sizes = {path: 2_000_000}
    started: list[str] = []
    release_first = threading.Event()

    def view(request: Any) -> HttpResponse:
        name = request.META.get("HTTP_X_NAME", "")
        started.append(name)
        if name == "first":
            release_first.wait(5)
        return HttpResponse(b"x" * sizes.get(request.path, 10))

    def call(name: str, target: str = path) -> None:
        request = RequestFactory().get(target)
        request.META["HTTP_X_NAME"] = name
        middleware.ReleaseRequestDataMiddleware(view)(request).close()

    call("learn")  # nothing known yet: runs at once, and teaches the middleware
    first = threading.Thread(target=call, args=("first",))
    first.start()
    _wait_for(lambda: started == ["learn", "first"])
    second = threading.Thread(target=call, args=("second",))
    second.start()
    call("other", f"/api/notes/{uuid.uuid4().hex}/")
    time.sleep(0.2)
    assert started == ["learn", "first", "other"]
    release_first.set()
    first.join(5)
    second.join(5)
    assert started == ["learn", "first", "other", "second"]

    sizes[path] = 10  # the note became short: its next reads go at once
    monkeypatch.setattr(middleware, "LARGE_REQUEST_WAIT_SECONDS", 0.05)
    call("short")
    gate = middleware._large_request_gate()
    assert gate is not None
    assert gate.acquire(timeout=1)
    try:
        call("free")
    finally:
        gate.release()
    assert started[-2:] == ["short", "free"]


def test_only_gets_are_remembered_as_large(settings: Any, monkeypatch: Any) -> None:
    """A large answer to a POST (one MCP endpoint serves every tool) makes no later call wait."""
    settings.TIDDLY_LARGE_REQUESTS_AT_ONCE = 1
    monkeypatch.setattr(middleware, "LARGE_REQUEST_WAIT_SECONDS", 0.05)
    path = f"/mcp/{uuid.uuid4().hex}/"
    answered = middleware.ReleaseRequestDataMiddleware(lambda _: HttpResponse(b"x" * 2_000_000))
    answered(RequestFactory().post(path, CONTENT_LENGTH="10")).close()
    gate = middleware._large_request_gate()
    assert gate is not None
    assert gate.acquire(timeout=1)
    try:
        for request in (
            RequestFactory().post(path, CONTENT_LENGTH="10"),
            RequestFactory().get(path),
        ):
            response = middleware.ReleaseRequestDataMiddleware(lambda _: HttpResponse())(request)
            assert response.status_code == 200
    finally:
        gate.release()


def test_a_get_that_read_a_long_content_takes_a_turn_next_time(
    settings: Any, monkeypatch: Any
) -> None:
    """A search in a 6 MB note answers a few bytes but holds the note while it runs: the path's
    next reads wait for a turn like large answers do. A path that read only short contents does
    not."""
    settings.TIDDLY_LARGE_REQUESTS_AT_ONCE = 1
    monkeypatch.setattr(middleware, "LARGE_REQUEST_WAIT_SECONDS", 0.05)
    long_path, short_path = (f"/api/notes/{uuid.uuid4().hex}/search" for _ in range(2))

    def view(request: Any) -> HttpResponse:
        note_read("x" * (LONG_READ_CHARS if request.path == long_path else 10))
        return HttpResponse(b"{}")

    def call(path: str) -> int:
        response = middleware.ReleaseRequestDataMiddleware(view)(RequestFactory().get(path))
        response.close()
        return response.status_code

    assert call(long_path) == 200
    assert call(short_path) == 200
    gate = middleware._large_request_gate()
    assert gate is not None
    assert gate.acquire(timeout=1)
    try:
        assert call(short_path) == 200  # never waits
        assert call(long_path) == 503  # waited its turn past the limit
    finally:
        gate.release()
    assert call(long_path) == 200
