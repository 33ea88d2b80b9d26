"""A stale write against a huge item answers without its content (SPEC §3.4 server_state)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from content.tests.editing_support import make_item

pytestmark = pytest.mark.django_db

OLD = "2000-01-01T00:00:00Z"


def test_a_stale_patch_of_a_huge_note_answers_without_its_content(api: Any, owner: Any) -> None:
    note = make_item(owner, "note", content="line\n" * 25_000)  # 125 000 characters
    url = reverse("note-detail", args=[note.pk])

    response = api.patch(url, {"title": "new", "expected_updated_at": OLD}, format="json")

    assert response.status_code == 409
    body = response.json()
    state = body["server_state"]
    assert "content" not in state
    assert state["content_omitted"] is True
    assert state["content_length"] == 125_000
    assert state["content_metadata"]["total_lines"] == 25_001
    assert state["title"] == note.title
    assert "partial read" in body["message"]
    assert len(response.content) < 5_000
    note.refresh_from_db()
    assert note.title != "new"


def test_a_stale_if_match_on_a_huge_note_is_a_small_412(api: Any, owner: Any) -> None:
    note = make_item(owner, "note", content="x" * 100_001)
    url = reverse("note-str-replace", args=[note.pk])

    response = api.patch(
        url,
        {"old_str": "x", "new_str": "y", "replace_all": True},
        format="json",
        HTTP_IF_MATCH='"stale"',
    )

    assert response.status_code == 412
    assert response.json()["server_state"]["content_omitted"] is True
    assert "content" not in response.json()["server_state"]


def test_an_item_at_the_limit_still_comes_back_whole(api: Any, owner: Any, settings: Any) -> None:
    settings.TIDDLY_CONFLICT_CONTENT_CHARS = 10
    note = make_item(owner, "note", content="0123456789")
    url = reverse("note-detail", args=[note.pk])

    response = api.patch(url, {"title": "new", "expected_updated_at": OLD}, format="json")

    assert response.status_code == 409
    state = response.json()["server_state"]
    assert state["content"] == "0123456789"
    assert "content_omitted" not in state
