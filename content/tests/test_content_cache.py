"""The process-local cache of large contents used by item reads (PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from content.queries.cache import ContentCache

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the cache sits behind pg_column_size"
)


def test_the_cache_evicts_least_recently_used_entries_beyond_its_size(settings: Any) -> None:
    settings.TIDDLY_CONTENT_CACHE_CHARS = 10
    cache = ContentCache()
    cache.put("a", "aaaa")
    cache.put("b", "bbbb")
    assert cache.get("a") == "aaaa"  # a is now the most recently used
    cache.put("c", "cccc")
    assert cache.get("b") is None
    assert cache.get("a") == "aaaa"
    assert cache.get("c") == "cccc"
    cache.put("huge", "x" * 11)  # larger than the whole cache: not kept
    assert cache.get("huge") is None


def _big_note(api: Any) -> tuple[str, str]:
    # Distinct lines so compression can't shrink it below the caching threshold.
    content = "\n".join(f"line {i} {i * 7919 % 100003} {hash(str(i))}" for i in range(40_000))
    response = api.post(reverse("note-list"), {"title": "big", "content": content}, format="json")
    assert response.status_code == 201
    return response.json()["id"], content


def _content_fetches(queries: CaptureQueriesContext) -> int:
    return sum(
        1
        for q in queries.captured_queries
        if q["sql"].startswith('SELECT "content_note"."content"')
    )


@postgres_only
def test_a_second_read_of_a_large_note_takes_its_content_from_the_cache(api: Any) -> None:
    from content.queries.cache import contents

    note_id, content = _big_note(api)
    contents.clear()  # as in a process that did not write it
    url = reverse("note-detail", args=[note_id])
    with CaptureQueriesContext(connection) as first:
        assert api.get(url).json()["content"] == content
    with CaptureQueriesContext(connection) as second:
        partial = api.get(url, {"start_line": 20_000, "end_line": 20_001}).json()
    assert _content_fetches(first) == 1
    assert _content_fetches(second) == 0
    assert partial["content"] == "\n".join(content.split("\n")[19_999:20_001])


@postgres_only
def test_an_edit_is_seen_by_the_next_read_although_the_old_content_was_cached(api: Any) -> None:
    note_id, content = _big_note(api)
    url = reverse("note-detail", args=[note_id])
    api.get(url)  # cache it
    edit = api.patch(
        reverse("note-str-replace", args=[note_id]),
        {"old_str": "line 12345 ", "new_str": "LINE 12345 "},
        format="json",
    )
    assert edit.status_code == 200
    body = api.get(url).json()
    assert body["content"] == content.replace("line 12345 ", "LINE 12345 ", 1)
    assert body["updated_at"] == edit.json()["updated_at"]


@postgres_only
def test_small_contents_come_inline_in_one_query(api: Any) -> None:
    created = api.post(reverse("note-list"), {"title": "t", "content": "small"}, format="json")
    url = reverse("note-detail", args=[created.json()["id"]])
    api.get(url)  # the token is cached after this
    with CaptureQueriesContext(connection) as queries:
        assert api.get(url).json()["content"] == "small"
    assert _content_fetches(queries) == 0


@postgres_only
def test_an_edit_of_a_large_note_needs_no_content_fetch_when_cached(api: Any) -> None:
    note_id, content = _big_note(api)  # create remembers the content
    edit_url = reverse("note-str-replace", args=[note_id])
    with CaptureQueriesContext(connection) as queries:
        first = api.patch(edit_url, {"old_str": "line 7 ", "new_str": "LINE 7 "}, format="json")
        second = api.patch(edit_url, {"old_str": "LINE 7 ", "new_str": "line 7 "}, format="json")
    assert (first.status_code, second.status_code) == (200, 200)
    assert _content_fetches(queries) == 0
    body = api.get(reverse("note-detail", args=[note_id])).json()
    assert body["content"] == content


@postgres_only
def test_concurrent_reads_never_cache_a_content_under_an_older_updated_at(
    api: Any, monkeypatch: Any
) -> None:
    """A write landing between the metadata query and the content fetch must not be cached as
    the old version: the guarded fetch misses and the item is re-read."""
    from content.models import Note
    from content.queries import lists as queries
    from content.queries.cache import contents

    note_id, _ = _big_note(api)
    contents.clear()
    real_one = queries.one
    calls = {"n": 0}

    def one_then_write(qs: Any) -> Any:
        item = real_one(qs)
        calls["n"] += 1
        if calls["n"] == 1:  # after the metadata query, before the content fetch
            Note.objects.filter(pk=note_id).update(
                content="changed", updated_at=item.updated_at.replace(year=2100)
            )
        return item

    monkeypatch.setattr(queries, "one", one_then_write)
    body = api.get(reverse("note-detail", args=[note_id])).json()
    assert body["content"] == "changed"
    assert not any(v == "changed" for v in contents._entries.values())


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's reads never ask the cache")
def test_on_sqlite_a_write_keeps_no_content_in_memory(api: Any) -> None:
    from content.queries.cache import contents

    contents.clear()
    note_id, content = _big_note(api)
    edited = api.patch(
        reverse("note-str-replace", args=[note_id]),
        {"old_str": "line 1 ", "new_str": "line one "},
        format="json",
    )
    assert edited.status_code == 200, edited.content
    assert contents._entries == {}
    body = api.get(reverse("note-detail", args=[note_id])).json()
    assert body["content"] == content.replace("line 1 ", "line one ", 1)
