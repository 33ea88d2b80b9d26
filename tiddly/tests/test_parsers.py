"""The JSON request parser lets a large body go once it is parsed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http.request import RawPostDataException
from django.test import RequestFactory
from rest_framework.request import Request

from content.models import Note
from tiddly.parsers import RELEASED_BODY_BYTES, JSONParser


def _parsed(payload: dict[str, Any]) -> tuple[Any, Any]:
    django_request = RequestFactory().post(
        "/", data=json.dumps(payload), content_type="application/json"
    )
    return Request(django_request, parsers=[JSONParser()]).data, django_request


def test_a_large_body_is_dropped_once_parsed() -> None:
    text = "x" * RELEASED_BODY_BYTES
    data, django_request = _parsed({"content": text})
    assert data == {"content": text}
    assert not hasattr(django_request, "_body")
    assert django_request.read() == b""
    with pytest.raises(RawPostDataException):
        django_request.body  # noqa: B018  (Django's answer to any read after the stream)


def test_a_small_body_stays_readable() -> None:
    data, django_request = _parsed({"content": "short"})
    assert data == {"content": "short"}
    assert json.loads(django_request.body) == {"content": "short"}


@pytest.mark.django_db
def test_a_large_create_still_saves_and_answers_what_was_sent(api: Any, owner: Any) -> None:
    content = "line of a large note\n" * (RELEASED_BODY_BYTES // 20)
    r = api.post("/api/notes/", {"title": "big", "content": content}, format="json")
    assert r.status_code == 201, r.content[:300]
    assert r.json()["content"] == content
    note = Note.objects.get(pk=r.json()["id"], owner=owner)
    assert note.content == content
    r = api.get(f"/api/notes/?q={'large note'}")
    assert r.status_code == 200
    assert [item["id"] for item in r.json()["results"]] == [str(note.pk)]
