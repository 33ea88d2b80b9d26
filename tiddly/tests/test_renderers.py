"""The orjson renderer writes what DRF's JSON renderer writes."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal

import orjson
import pytest
from django.utils.translation import gettext_lazy
from rest_framework import renderers
from rest_framework.exceptions import ErrorDetail

from content.models import Note
from tiddly.renderers import JSONRenderer

SAMPLES = [
    {"id": uuid.UUID("0190a0a0-0000-7000-8000-000000000001"), "n": 3, "ok": True, "none": None},
    {"at": dt.datetime(2026, 11, 28, 12, 30, 1, 123456, tzinfo=dt.UTC), "day": dt.date(2026, 1, 2)},
    {"price": Decimal("1.50"), "lazy": gettext_lazy("This field is required.")},
    {"errors": {"title": [ErrorDetail("Too long.", code="max_length")]}},
    {1: "int key", "text": 'ünïcödé — 日本語 \u2028 line \u2029 para "q" \\ \n\t'},
    [{"nested": [[1, 2.5], {"x": "y"}]}],
    {"t": "Café, no line separators"},
]


@pytest.mark.parametrize("data", SAMPLES)
def test_same_bytes_as_drf(data):
    assert JSONRenderer().render(data) == renderers.JSONRenderer().render(data)


def test_line_separators_are_escaped():
    body = JSONRenderer().render({"t": "a\u2028b\u2029c"})
    assert body == b'{"t":"a\\u2028b\\u2029c"}'
    assert json.loads(body) == {"t": "a\u2028b\u2029c"}


def test_indent_asked_for_is_drf_s():
    data = {"a": [1, 2]}
    body = JSONRenderer().render(data, "application/json; indent=2")
    assert body == renderers.JSONRenderer().render(data, "application/json; indent=2")
    assert b"\n  " in body


def test_none_is_an_empty_body():
    assert JSONRenderer().render(None) == b""


def test_a_note_s_body_is_rendered_by_it(api, owner, monkeypatch):
    encoded = []
    dumps = orjson.dumps

    def spy(*args, **kwargs):
        encoded.append(1)
        return dumps(*args, **kwargs)

    monkeypatch.setattr(orjson, "dumps", spy)
    content = "line\u2028sep — ünï " * 50
    created = api.post("/api/notes/", {"title": "T", "content": content}, format="json")
    assert created.status_code == 201
    got = api.get(f"/api/notes/{created.json()['id']}/")
    assert got.status_code == 200
    assert got["Content-Type"] == "application/json"
    assert b"\\u2028" in got.content
    assert "ünï".encode() in got.content  # UTF-8, not \\u escapes
    body = json.loads(got.content)
    assert body["content"] == content
    assert body["updated_at"].endswith("Z")  # DRF's own date format
    assert Note.objects.get(owner=owner).content == content
    assert len(encoded) == 2  # the create's body and the read's
