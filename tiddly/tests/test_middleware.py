"""The middleware that frees a request's data when its response is closed."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import RequestFactory
from rest_framework.response import Response

from tiddly import middleware

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


def test_a_response_that_holds_no_cycles_is_spared_the_collection(monkeypatch: Any) -> None:
    calls: list[int] = []
    monkeypatch.setattr(middleware.gc, "collect", lambda: calls.append(1))
    response = Response({"content": "x"})
    response.content = b"x" * 2_000_000
    response.holds_no_cycles = True  # type: ignore[attr-defined]
    request = RequestFactory().post("/")
    middleware.ReleaseRequestDataMiddleware(lambda _: response)(request).close()
    assert calls == []
