"""`q` is at most 500 characters on every list (SPEC §3.3), on SQLite and PostgreSQL alike."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from content.tests.factories import NoteFactory
from content.tests.helpers import assert_error

pytestmark = pytest.mark.django_db

LISTS = ["bookmark-list", "note-list", "prompt-list", "content-list"]
# Made of real words so PostgreSQL's websearch_to_tsquery has work to do: a 20 000-word query
# like this one was a 500 ("stack depth limit exceeded") before the cap.
WORDS = " ".join(["kubernetes OR -deploy"] * 7000)


@pytest.mark.parametrize("name", LISTS)
def test_a_query_over_500_characters_is_a_validation_error(api: Any, name: str) -> None:
    body = assert_error(api.get(reverse(name), {"q": "a" * 501}), 400, "validation_error")
    assert "q" in body["fields"]
    assert "500" in body["fields"]["q"][0]


@pytest.mark.parametrize("name", LISTS)
def test_a_20000_word_query_is_refused_not_a_server_error(api: Any, name: str) -> None:
    assert_error(api.get(reverse(name), {"q": WORDS}), 400, "validation_error")


@pytest.mark.parametrize("name", LISTS)
def test_a_query_of_exactly_500_characters_is_searched(api: Any, owner: Any, name: str) -> None:
    query = ("kubernetes " * 50)[:500]
    NoteFactory(owner=owner, title="x", content=query)
    response = api.get(reverse(name), {"q": query})
    assert response.status_code == 200
    expected = 1 if name in ("note-list", "content-list") else 0
    assert response.json()["count"] == expected
