"""The library's fast paths (issue 30's targets): tag chips cached per owner and change, the
reading page without the meaning pass (a page of its own) and its rendered windows kept."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from content import queries
from content.library import reading
from content.models import Note
from content.queries import ItemRef
from content.queries import cache as content_cache
from content.search import related
from content.services import update_item
from content.tests.test_library_pages import ACTOR, note, page
from tiddly import compiled


@pytest.fixture
def browser(owner: Any) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def _chip(body: str, tag: str) -> bool:
    return f"?tag={tag}" in body


def test_tag_chips_are_counted_once_until_an_item_changes(
    browser: Client, owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = note(owner, tags=["food"])
    counted: list[int] = []
    real = queries.top_tags

    def counting(*args: Any) -> Any:
        counted.append(1)
        return real(*args)

    monkeypatch.setattr(queries, "top_tags", counting)
    assert _chip(browser.get("/library/").content.decode(), "food")
    assert _chip(browser.get("/library/").content.decode(), "food")
    assert len(counted) == 1
    update_item(owner=owner, ref=ItemRef(Note, pk=item.pk), actor=ACTOR, data={"tags": ["drink"]})
    body = browser.get("/library/").content.decode()
    assert len(counted) == 2
    assert _chip(body, "drink")
    assert not _chip(body, "food")


def test_a_new_item_shows_in_the_chips_at_once(browser: Client, owner: Any) -> None:
    note(owner, tags=["food"])
    assert not _chip(browser.get("/library/").content.decode(), "travel")
    note(owner, "Trip", tags=["travel"])
    assert _chip(browser.get("/library/").content.decode(), "travel")


def test_another_persons_chips_are_never_shown(browser: Client, owner: Any, other: Any) -> None:
    note(other, tags=["secret"])
    browser_other = Client()
    browser_other.force_login(other)
    assert _chip(browser_other.get("/library/").content.decode(), "secret")
    assert not _chip(browser.get("/library/").content.decode(), "secret")


def test_the_reading_page_does_not_run_the_meaning_pass(
    browser: Client, owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = note(owner, "Groceries", "milk\neggs")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the reading page asked for related items")

    monkeypatch.setattr(related, "suggestions", refuse)
    response = browser.get(page(item))
    assert response.status_code == 200
    assert page(item, "library-related") in response.content.decode()


def test_related_items_and_suggested_tags_have_their_own_page(
    browser: Client, owner: Any, other: Any
) -> None:
    note(owner, "Shopping list", "buy food and milk", tags=["food"])
    item = note(owner, "Groceries", "milk and food for the week")
    response = browser.get(page(item, "library-related"))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="related-heading"' in body
    assert "Related to Groceries" in body
    assert '<input type="hidden" name="tag" value="food">' in body
    assert f'name="next" value="{page(item, "library-related")}"' in body  # one click, stay here
    theirs = note(other, "Their note")
    assert browser.get(page(theirs, "library-related")).status_code == 404


def test_a_rendered_window_is_kept_until_the_item_changes(
    browser: Client, owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = note(owner, "Doc", "# First heading\nsome text")
    rendered: list[str] = []
    real = reading.markdown_to_html

    def counting(text: str) -> str:
        rendered.append(text)
        return real(text)

    monkeypatch.setattr(reading, "markdown_to_html", counting)
    assert "First heading" in browser.get(page(item)).content.decode()
    assert "First heading" in browser.get(page(item)).content.decode()
    assert len(rendered) == 1
    update_item(
        owner=owner, ref=ItemRef(Note, pk=item.pk), actor=ACTOR,
        data={"content": "# Second heading\nother text"},
    )  # fmt: skip
    body = browser.get(page(item)).content.decode()
    assert "Second heading" in body
    assert "First heading" not in body
    assert len(rendered) == 2


def _large(settings: Any) -> None:
    """Every content counts as large (PostgreSQL: read through the content cache)."""
    settings.TIDDLY_CONTENT_CACHE_MIN_BYTES = 1
    content_cache.contents.clear()
    reading.rendered.clear()


def test_the_first_window_of_a_large_note_reads_only_its_opening(
    browser: Client, owner: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL decompresses only the opening for the first page (nothing whole is fetched,
    so nothing lands in the content cache); "Continue" reads the content whole. SQLite reads
    every content whole."""
    _large(settings)
    monkeypatch.setattr(reading, "SLICE_CHARS", 5000)  # 200 lines of this note, not 1 000
    item = note(owner, "Long", "\n".join(f"line number {i}" for i in range(1, 1001)))
    content_cache.contents.clear()  # as in a process that has not read it yet
    body = browser.get(page(item)).content.decode()
    assert "line number 200<" in body
    assert "line number 201" not in body
    assert "?start=201" in body
    opening_only = connection.vendor == "postgresql"
    assert ("of 1000" in body) is not opening_only  # an opening does not tell what follows
    if opening_only:
        assert content_cache.contents.get(content_cache.key(item)) is None
    second = browser.get(page(item) + "?start=201").content.decode()
    assert "Lines 201\u2013400 of 1000" in second
    assert "line number 201\n" in second
    assert "line number 401" not in second


def test_lines_too_long_for_the_opening_are_read_whole(
    browser: Client, owner: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _large(settings)
    monkeypatch.setattr(reading, "SLICE_CHARS", 100)
    long_line = "word " * 40
    item = note(owner, "Wide", "\n".join(f"{i} {long_line}" for i in range(1, 301)))
    body = browser.get(page(item)).content.decode()
    assert "Lines 1\u2013200 of 300" in body
    assert f"200 {long_line.strip()}" in body
    assert "201 word" not in body


def test_a_large_note_that_fits_its_opening_is_shown_whole(
    browser: Client, owner: Any, settings: Any
) -> None:
    _large(settings)
    item = note(owner, "Short", "alpha\nbeta\ngamma")
    body = browser.get(page(item)).content.decode()
    assert "gamma" in body
    assert "Continue from line" not in body
    assert "Lines 1" not in body


def _continue(body: str) -> str | None:
    found = re.search(r'<a class="button" href="(\?start=[^"#]+)#content-heading"', body)
    return html.unescape(found[1]) if found else None


def test_continue_links_read_each_window_from_its_piece_to_the_end(
    browser: Client, owner: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each "Continue" link carries where its window starts (and the item's version): PostgreSQL
    then reads 'piece' characters from there; every window shows its own lines to the last."""
    _large(settings)
    monkeypatch.setattr(reading, "SLICE_CHARS", 5000)
    item = note(owner, "Long", "\n".join(f"line number {i}" for i in range(1, 1001)))
    content_cache.contents.clear()
    body, seen, pages = browser.get(page(item)).content.decode(), [], 0
    while True:
        pages += 1
        seen += [int(n) for n in re.findall(r"line number (\d+)", body)]
        link = _continue(body)
        if link is None:
            break
        assert ("&at=" in link) is (connection.vendor == "postgresql")
        body = browser.get(page(item) + link).content.decode()
    assert seen == list(range(1, 1001))
    assert pages == 5
    assert "Lines 801\u20131000 of 1000" in body
    if connection.vendor == "postgresql":
        assert content_cache.contents.get(content_cache.key(item)) is None  # never read whole


def test_a_continue_link_of_another_version_or_offset_reads_the_content_whole(
    browser: Client, owner: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _large(settings)
    monkeypatch.setattr(reading, "SLICE_CHARS", 5000)
    item = note(owner, "Long", "\n".join(f"line number {i}" for i in range(1, 1001)))
    link = _continue(browser.get(page(item)).content.decode())
    assert link is not None
    update_item(owner=owner, ref=ItemRef(Note, pk=item.pk), actor=ACTOR,
                data={"content": "\n".join(f"new line {i}" for i in range(1, 1001))})  # fmt: skip
    stale = browser.get(page(item) + link).content.decode()
    assert "Lines 201\u2013400 of 1000" in stale
    assert "new line 201\n" in stale
    off = re.sub(r"at=\d+", "at=7", link)  # not a line's start
    body = browser.get(page(item) + off).content.decode()
    assert "new line 201\n" in body
    assert "Lines 201\u2013400 of 1000" in body


def test_each_list_shape_is_compiled_once_and_serves_every_owner(
    owner: Any, other: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list's SQL is compiled once per shape with marker values for the owner and the moment;
    each request puts its own in (another person's items never show, an archive date that has
    passed since counts)."""
    compiled._shapes.clear()
    built: list[Any] = []
    real = compiled._compiled

    def counting(key: Any, build: Any) -> Any:
        if key not in compiled._shapes:
            built.append(key)
        return real(key, build)

    monkeypatch.setattr(compiled, "_compiled", counting)
    note(owner, "Mine", tags=["food"])
    later = note(owner, "Archived soon")
    note(other, "Theirs")
    mine, theirs = Client(), Client()
    mine.force_login(owner)
    theirs.force_login(other)
    for _ in range(2):
        body = mine.get("/library/").content.decode()
        assert "Mine" in body
        assert "Archived soon" in body
        assert "Theirs" not in body
        assert "1\u20132 of 2 items" in body
        assert "Theirs" in theirs.get("/library/").content.decode()
        assert "Mine" not in theirs.get("/library/").content.decode()
    assert len(built) == 2  # the page and the survey, for both people
    Note.objects.filter(pk=later.pk).update(archived_at=timezone.now() - timedelta(seconds=1))
    body = mine.get("/library/").content.decode()
    assert "Archived soon" not in body
    assert "1\u20131 of 1 items" in body
    assert len(built) == 2
