"""Concurrent str-replace on one item: the row lock serialises edits (SPEC §4.3 "Concurrency").

Real threads, each with its own database connection, hit the same note at once — through the REST
API (own APIClient per thread) or straight through the service. SQLite serialises writers at the
file level, so the row-lock behaviour under test only exists on PostgreSQL; CI runs both databases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from content import services
from content.errors import NoMatch
from content.history import Actor
from content.models import Note
from content.services import ItemRef
from content.tests.editing_support import in_threads, make_item, url, versions

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row locks (select_for_update) need PostgreSQL"
    ),
]


def api_edit(token: str, note: Note) -> Callable[[str, str], str]:
    """An edit through HTTP with a fresh client: returns ``"ok"`` or the error code."""

    def edit(old_str: str, new_str: str) -> str:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        response = client.patch(
            url("note", "str-replace", note.pk),
            {"old_str": old_str, "new_str": new_str},
            format="json",
        )
        if response.status_code == 200:
            assert response.json()["match_type"] == "exact"
            return "ok"
        assert response.status_code == 400, response.content
        return response.json()["error"]

    return edit


def service_edit(owner: Any, note: Note) -> Callable[[str, str], str]:
    """The same edit through the service, as the MCP tools call it."""

    def edit(old_str: str, new_str: str) -> str:
        try:
            services.edit_content(
                owner=owner,
                ref=ItemRef(Note, pk=note.pk),
                old_str=old_str,
                new_str=new_str,
                actor=Actor(source="mcp-content"),
            )
        except NoMatch:
            return "no_match"
        return "ok"

    return edit


@pytest.fixture(params=["api", "service"])
def editor(request: Any, owner: Any, api: Any) -> Callable[[Note], Callable[[str, str], str]]:
    if request.param == "api":
        return lambda note: api_edit(api.token, note)
    return lambda note: service_edit(owner, note)


def test_twenty_concurrent_edits_of_distinct_markers_all_land(owner: Any, editor: Any) -> None:
    markers = [f"[marker {i:02d}]" for i in range(20)]
    note = make_item(owner, "note", content="\n".join(f"line {m} end" for m in markers))
    edit = editor(note)

    results = in_threads(20, lambda i: edit(markers[i], f"<edited {i:02d}>"))

    assert results == ["ok"] * 20
    row = Note.objects.get(pk=note.pk)
    assert row.content == "\n".join(f"line <edited {i:02d}> end" for i in range(20))
    history = versions(note)
    assert [v.version for v in history] == list(range(1, 22))
    assert all(v.changed_fields == ["content"] for v in history[1:])
    assert [v.created_at for v in history] == sorted(v.created_at for v in history)
    assert history[-1].created_at == row.updated_at


def test_ten_concurrent_edits_of_the_same_text_give_one_success(owner: Any, editor: Any) -> None:
    note = make_item(owner, "note", content="before\nTARGET\nafter")
    edit = editor(note)

    results = in_threads(10, lambda i: edit("TARGET", f"winner {i}"))

    assert sorted(results) == ["no_match"] * 9 + ["ok"]
    winner = results.index("ok")
    row = Note.objects.get(pk=note.pk)
    assert row.content == f"before\nwinner {winner}\nafter"
    assert [v.version for v in versions(note)] == [1, 2]


def api_multi_edit(token: str, note: Note) -> Callable[[list[dict[str, str]]], str]:
    """A multi-edit (``edits``) through HTTP with a fresh client: ``"ok"`` or the error code."""

    def edit(edits: list[dict[str, str]]) -> str:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        response = client.patch(
            url("note", "str-replace", note.pk), {"edits": edits}, format="json"
        )
        if response.status_code == 200:
            return "ok"
        assert response.status_code == 400, response.content
        return response.json()["error"]

    return edit


def test_ten_concurrent_multi_edits_of_distinct_markers_all_land_as_one_version_each(
    owner: Any, api: Any
) -> None:
    markers = [f"[marker {i:02d}]" for i in range(30)]
    note = make_item(owner, "note", content="\n".join(f"line {m} end" for m in markers))
    edit = api_multi_edit(api.token, note)

    def work(i: int) -> str:
        mine = markers[i * 3 : i * 3 + 3]
        return edit([{"old_str": m, "new_str": m.replace("marker", "edited")} for m in mine])

    results = in_threads(10, work)

    assert results == ["ok"] * 10
    row = Note.objects.get(pk=note.pk)
    assert row.content == "\n".join(f"line [edited {i:02d}] end" for i in range(30))
    assert [v.version for v in versions(note)] == list(range(1, 12))


def test_concurrent_multi_edits_sharing_a_target_give_one_success(owner: Any, api: Any) -> None:
    note = make_item(owner, "note", content="a1 a2 a3 SHARED a4 a5 a6")
    edit = api_multi_edit(api.token, note)

    results = in_threads(
        6,
        lambda i: edit(
            [
                {"old_str": f"a{i + 1}", "new_str": f"b{i + 1}"},
                {"old_str": "SHARED", "new_str": f"won-{i}"},
            ]
        ),
    )

    assert sorted(results) == ["no_match"] * 5 + ["ok"]
    winner = results.index("ok")
    row = Note.objects.get(pk=note.pk)
    assert f"won-{winner}" in row.content
    assert f"b{winner + 1}" in row.content
    assert row.content.count("b") == 1  # the losers changed nothing
    assert [v.version for v in versions(note)] == [1, 2]
