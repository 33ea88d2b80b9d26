"""/library/ (SPEC §9 Round 4): the list, the reading page and its buttons, for a signed-in
person without staff rights — their own items only, another person's item a 404."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from content.history import Actor
from content.models import Bookmark, ItemVersion, Note, PageCapture, Share
from content.queries import ItemRef
from content.services import create_item, trash_item, update_item
from content.tests.factories import BookmarkFactory, NoteFactory
from prompts.models import Prompt

ACTOR = Actor(source="test")


@pytest.fixture
def browser(owner: Any) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def note(owner: Any, title: str = "Groceries", content: str = "milk\neggs", **data: Any) -> Note:
    return create_item(owner=owner, model=Note, actor=ACTOR,
                       data={"title": title, "content": content, **data})  # fmt: skip


def page(item: Any, view: str = "library-item", *extra: Any) -> str:
    return reverse(view, args=[item.type_name, item.pk, *extra])


def test_anonymous_visitors_are_sent_to_sign_in(client: Client, owner: Any) -> None:
    response = client.get("/library/")
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("oauth-login") + "?next=/library/")


def test_the_list_shows_only_the_persons_own_items(browser: Client, owner: Any, other: Any) -> None:
    note(owner, "My groceries")
    note(other, "Their secret plans")
    response = browser.get("/library/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "My groceries" in body
    assert "Their secret plans" not in body
    assert "1\u20131 of 1 items" in body


def test_another_persons_item_is_a_404_on_every_page(browser: Client, other: Any) -> None:
    theirs = note(other, "Their note")
    for view in ("library-item", "library-edit", "library-history"):
        assert browser.get(page(theirs, view)).status_code == 404
    assert browser.get(page(theirs, "library-version", 1)).status_code == 404
    for action in ("archive", "trash", "share", "tag", "restore-version"):
        response = browser.post(page(theirs, "library-action", action), {"tag": "x", "version": 1})
        assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.archived_at is None
    assert theirs.deleted_at is None
    assert not Share.objects.exists()
    assert ItemVersion.objects.filter(item_id=theirs.pk).count() == 1


def test_an_unknown_type_or_id_is_a_404(browser: Client) -> None:
    assert (
        browser.get("/library/spaceship/0190d9c0-0000-7000-8000-000000000000/").status_code == 404
    )
    assert browser.get("/library/note/not-a-uuid/").status_code == 404


def test_pages_carry_a_csp_without_inline_scripts(browser: Client, owner: Any) -> None:
    item = note(owner)
    for path in ("/library/", page(item), page(item, "library-edit"), "/library/new/"):
        csp = browser.get(path)["Content-Security-Policy"]
        assert "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
        assert "default-src 'none'" in csp


def _count_queries(browser: Client, path: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert browser.get(path).status_code == 200
    return len(queries)


def test_a_list_page_costs_the_same_queries_for_few_or_many_items(
    browser: Client, owner: Any
) -> None:
    Prompt.objects.create(owner=owner, name="p", content="x")
    for i in range(3):
        NoteFactory(owner=owner, tags=["a"])
        BookmarkFactory(owner=owner, url=f"https://example.com/{i}", tags=["b"])
    few = _count_queries(browser, "/library/")
    for i in range(60):
        NoteFactory(owner=owner, tags=["a", f"t{i}"])
        BookmarkFactory(owner=owner, url=f"https://example.org/{i}", tags=["b"])
    Prompt.objects.create(owner=owner, name="q", content="x")
    many = _count_queries(browser, "/library/")
    assert many <= few + 1  # the count of a full page; nothing per item
    assert _count_queries(browser, "/library/?page=2") <= many + 1


def test_tag_chips_filter_and_views_show_archive_and_trash(browser: Client, owner: Any) -> None:
    note(owner, "Tagged one", tags=["python"])
    note(owner, "Untagged one")
    gone = note(owner, "Binned one")
    trash_item(owner=owner, ref=ItemRef(Note, pk=gone.pk), actor=ACTOR)
    body = browser.get("/library/").content.decode()
    assert "?tag=python" in body  # the chip
    assert "Binned one" not in body
    tagged = browser.get("/library/?tag=python").content.decode()
    assert "Tagged one" in tagged
    assert "Untagged one" not in tagged
    trash = browser.get("/library/?view=deleted").content.decode()
    assert "Binned one" in trash
    assert "Tagged one" not in trash


def test_a_keyword_search_finds_the_note(browser: Client, owner: Any, settings: Any) -> None:
    settings.TIDDLY_EMBEDDINGS = "off"
    note(owner, "Sourdough", "Feed the starter at night")
    note(owner, "Taxes", "Receipts in the blue folder")
    body = browser.get("/library/", {"q": "starter", "mode": "keyword"}).content.decode()
    assert "Sourdough" in body
    assert "Taxes" not in body


def test_bad_list_settings_are_a_400_that_says_which(browser: Client) -> None:
    response = browser.get("/library/", {"sort": "colour", "page": "0"})
    assert response.status_code == 400
    body = response.content.decode()
    assert "sort" in body
    assert "page" in body


def test_untitled_bookmarks_show_the_urls_host_and_path(browser: Client, owner: Any) -> None:
    BookmarkFactory(owner=owner, title=None, url="https://docs.example.com/guide/intro/")
    body = browser.get("/library/").content.decode()
    assert "docs.example.com/guide/intro<" in body


def test_the_reading_page_renders_sanitised_markdown(browser: Client, owner: Any) -> None:
    item = note(owner, "Findings", "# Heading\n\n<script>alert(1)</script>\n\n**bold**")
    body = browser.get(page(item)).content.decode()
    assert "<h1>Heading</h1>" in body
    assert "<strong>bold</strong>" in body
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;" in body


def test_a_long_note_is_read_in_windows_with_continue(browser: Client, owner: Any) -> None:
    text = "\n".join(f"line number {i}" for i in range(1, 1001))
    item = note(owner, "Long", text)
    body = browser.get(page(item)).content.decode()
    assert "Lines 1\u2013200 of 1000" in body
    assert "line number 200" in body
    assert "line number 201" not in body
    assert "?start=201" in body
    second = browser.get(page(item) + "?start=201").content.decode()
    assert "line number 201" in second
    assert "line number 200<" not in second
    last = browser.get(page(item) + "?start=801").content.decode()
    assert "line number 1000" in last
    assert "Continue from line" not in last


def test_editing_saves_through_the_service(browser: Client, owner: Any) -> None:
    item = note(owner, "Old", "old text")
    form = browser.get(page(item, "library-edit")).context["form"]
    data = {**form.initial, "title": "New", "content": "new text", "tags": "one, two"}
    response = browser.post(page(item, "library-edit"), data)
    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.title, item.content, item.tag_names()) == ("New", "new text", ["one", "two"])
    assert ItemVersion.objects.filter(item_id=item.pk).latest("version").source == "library"


def test_a_stale_edit_loses_nothing_and_shows_both_texts(browser: Client, owner: Any) -> None:
    item = note(owner, "Plan", "first draft")
    form = browser.get(page(item, "library-edit")).context["form"]
    update_item(owner=owner, ref=ItemRef(Note, pk=item.pk), actor=ACTOR,
                data={"content": "someone else's text"})  # fmt: skip
    data = {**form.initial, "content": "my careful words"}
    response = browser.post(page(item, "library-edit"), data)
    assert response.status_code == 409
    body = response.content.decode()
    assert "Someone else changed this note" in body
    assert "my careful words" in body
    assert "someone else&#x27;s text" in body
    item.refresh_from_db()
    assert item.content == "someone else's text"
    # Saving the shown form again (now based on the current version) goes through.
    again = response.context["form"].data
    assert browser.post(page(item, "library-edit"), again).status_code == 302
    item.refresh_from_db()
    assert item.content == "my careful words"


def test_an_invalid_edit_is_a_400_on_the_field(browser: Client, owner: Any) -> None:
    item = note(owner, "Plan", "text")
    form = browser.get(page(item, "library-edit")).context["form"]
    response = browser.post(page(item, "library-edit"), {**form.initial, "title": ""})
    assert response.status_code == 400
    assert "title" in response.content.decode().lower()
    item.refresh_from_db()
    assert item.title == "Plan"


def test_a_quick_note_takes_its_title_from_its_first_line(browser: Client, owner: Any) -> None:
    response = browser.post("/library/new/", {"kind": "note", "note-content": "# Call Ana\nabout the trip",
                                              "note-tags": "todo"})  # fmt: skip
    made = Note.objects.get(owner=owner)
    assert response.status_code == 302
    assert response["Location"] == page(made)
    assert (made.title, made.content, made.tag_names()) == (
        "Call Ana",
        "# Call Ana\nabout the trip",
        ["todo"],
    )


def test_an_empty_quick_note_is_a_400(browser: Client, owner: Any) -> None:
    response = browser.post("/library/new/", {"kind": "note", "note-content": ""})
    assert response.status_code == 400
    assert not Note.objects.exists()


def test_a_link_is_saved_and_a_saved_one_is_shown(browser: Client, owner: Any) -> None:
    response = browser.post(
        "/library/new/", {"kind": "bookmark", "bookmark-url": "https://example.com/a"}
    )
    made = Bookmark.objects.get(owner=owner)
    assert response.status_code == 302
    assert response["Location"] == page(made)
    again = browser.post(
        "/library/new/", {"kind": "bookmark", "bookmark-url": "https://example.com/a"}
    )
    assert again.status_code == 302
    assert again["Location"] == page(made)
    assert Bookmark.objects.count() == 1
    bad = browser.post("/library/new/", {"kind": "bookmark", "bookmark-url": "ftp://x"})
    assert bad.status_code == 400
    assert Bookmark.objects.count() == 1


def test_share_and_stop_sharing_show_the_link(browser: Client, owner: Any) -> None:
    item = note(owner)
    assert browser.post(page(item, "library-action", "share")).status_code == 302
    share = Share.objects.get(item_id=item.pk)
    assert f"/s/{share.token}" in browser.get(page(item)).content.decode()
    assert browser.post(page(item, "library-action", "unshare")).status_code == 302
    assert not Share.objects.exists()
    assert "/s/" not in browser.get(page(item)).content.decode()


def test_archive_trash_and_restore(browser: Client, owner: Any) -> None:
    item = note(owner)
    browser.post(page(item, "library-action", "archive"))
    item.refresh_from_db()
    assert item.is_archived
    browser.post(page(item, "library-action", "unarchive"))
    browser.post(page(item, "library-action", "trash"))
    item.refresh_from_db()
    assert item.is_deleted
    browser.post(page(item, "library-action", "restore"))
    item.refresh_from_db()
    assert item.state == "active"


def test_restoring_a_version_and_undoing_it(browser: Client, owner: Any) -> None:
    item = note(owner, "Plan", "version one")
    update_item(
        owner=owner, ref=ItemRef(Note, pk=item.pk), actor=ACTOR, data={"content": "version two"}
    )
    diff = browser.get(page(item, "library-version", 2)).content.decode()
    assert "-version one" in diff
    assert "+version two" in diff
    response = browser.post(
        page(item, "library-action", "restore-version"), {"version": 1, "current": 2}
    )
    assert response.status_code == 302
    assert response["Location"].endswith("?undo=2")
    item.refresh_from_db()
    assert item.content == "version one"
    assert "Undo (put back version 2)" in browser.get(response["Location"]).content.decode()
    browser.post(page(item, "library-action", "restore-version"), {"version": 2})
    item.refresh_from_db()
    assert item.content == "version two"


def test_a_suggested_tag_is_added_with_one_click(browser: Client, owner: Any) -> None:
    item = note(owner, tags=["food"])
    assert browser.post(page(item, "library-action", "tag"), {"tag": "shopping"}).status_code == 302
    item.refresh_from_db()
    assert item.tag_names() == ["food", "shopping"]


def test_capture_again_queues_a_capture(browser: Client, owner: Any) -> None:
    bookmark = BookmarkFactory(owner=owner, url="https://example.com/page")
    response = browser.post(page(bookmark, "library-action", "capture"))
    assert response.status_code == 302
    assert PageCapture.objects.get(bookmark=bookmark).status == "pending"
    assert "Capture queued" in browser.get(page(bookmark)).content.decode()


def test_linking_two_items_by_their_library_address(
    browser: Client, owner: Any, other: Any
) -> None:
    first, second = note(owner, "First"), note(owner, "Second")
    response = browser.post(page(first, "library-action", "link"), {"target": page(second)})
    assert response.status_code == 302
    assert "Second" in browser.get(page(first)).content.decode().split('id="links-heading"')[1]
    theirs = note(other, "Theirs")
    browser.post(page(first, "library-action", "link"), {"target": page(theirs)})
    assert "Theirs" not in browser.get(page(first)).content.decode()


def test_the_landing_page_links_the_library_for_everyone_signed_in(
    browser: Client, client: Client
) -> None:
    assert 'href="/library/"' in browser.get("/").content.decode()
    assert "next=/library/" in client.get("/").content.decode()
