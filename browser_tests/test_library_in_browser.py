"""The library (/library/, issue 30) in a real browser, used by a person without staff rights:
sign in, save a link and a quick note, find the note by meaning, read a captured page, edit with
a stale form without losing text, share and stop sharing, restore a version; another person's
item is a 404. axe-core checks each page for serious or critical accessibility violations.

``TIDDLY_LIBRARY_SHOTS=<folder>`` also saves screenshots of the main pages at 1280 and 375 px.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.ui import WebDriverWait

from browser_tests.conftest import PASSWORD, assert_accessible
from content.history import Actor
from content.models import Bookmark, Note, Share
from content.queries import ItemRef
from content.services import CreateOptions, create_item, update_item
from tiddly.tasks import run_tasks

ACTOR = Actor(source="test")
SHOTS = os.environ.get("TIDDLY_LIBRARY_SHOTS")
ARTICLE = """<html><head><title>How to keep a sourdough starter</title></head><body><article>
<h1>How to keep a sourdough starter</h1>
<p>Feed it flour and water every day. Keep it warm, and discard half before each feeding.</p>
<h2>Troubleshooting</h2><p>A layer of liquid on top means it is hungry: feed it more often.</p>
<p>Hooch smells sour; pour it off or stir it back in for a tangier loaf of bread.</p>
</article></body></html>"""


@pytest.fixture(autouse=True)
def _local_meaning(settings: Any, monkeypatch: Any) -> None:
    settings.TIDDLY_EMBEDDINGS = "local"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from content.search import semantic

    semantic.clear()


def _shot(browser: WebDriver, name: str) -> None:
    if not SHOTS:
        return
    folder = Path(SHOTS)
    folder.mkdir(parents=True, exist_ok=True)
    for width in (1280, 375):
        browser.set_window_size(width, 900)
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(width, min(max(height + 140, 600), 4000))
        browser.save_screenshot(str(folder / f"{name}-{width}.png"))
    browser.set_window_size(1400, 1000)


def _check(browser: WebDriver, axe_source: str, shot: str | None = None) -> None:
    assert_accessible(browser, axe_source)
    if shot:
        _shot(browser, shot)


def _sign_in(browser: WebDriver, base: str, username: str) -> None:
    browser.delete_all_cookies()
    browser.get(f"{base}/library/")
    assert "/oauth/login" in browser.current_url  # anonymous: sent to sign in first
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Your library"


def _submit(browser: WebDriver, css: str) -> None:
    """Click a form's button and wait for the next page (the click itself does not wait)."""
    page = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.CSS_SELECTOR, css).click()
    WebDriverWait(browser, 20).until(lambda _: _gone(page))


def _gone(page: WebElement) -> bool:
    """``staleness_of``, also when chromedriver catches the old page mid-unload and answers that
    the element's node no longer belongs to the document (an "unknown error")."""
    try:
        return bool(staleness_of(page)(None))
    except WebDriverException as exc:
        if "does not belong to the document" in str(exc):
            return True
        raise


def test_a_person_without_staff_rights_uses_their_library(
    browser: WebDriver, live_server: Any, transactional_db: None, axe_source: str
) -> None:
    base = live_server.url
    user = get_user_model().objects.create_user(username="robin", password=PASSWORD)
    assert not user.is_staff
    _sign_in(browser, base, "robin")
    _check(browser, axe_source)

    # Save a link, then a quick note.
    browser.find_element(By.LINK_TEXT, "Add").click()
    _check(browser, axe_source, "add")
    browser.find_element(By.ID, "id_bookmark-url").send_keys("https://example.com/reading/list")
    _submit(browser, "#save-link")
    link = Bookmark.objects.get(owner=user)
    assert browser.current_url == f"{base}/library/bookmark/{link.pk}/"
    assert browser.find_element(By.ID, "item-title").text == "example.com/reading/list"
    browser.get(f"{base}/library/new/")
    browser.find_element(By.ID, "id_note-content").send_keys(
        "Bread baking notes\nKeep the levain fed with flour and water; proof the dough overnight."
    )
    browser.find_element(By.ID, "id_note-tags").send_keys("kitchen")
    _submit(browser, "#save-note")
    note = Note.objects.get(owner=user)
    assert note.title == "Bread baking notes"
    assert browser.find_element(By.ID, "item-title").text == "Bread baking notes"

    # A captured page to read (extracted from its HTML, as the capture task would).
    create_item(owner=user, model=Bookmark, actor=ACTOR, data={"url": "https://example.org/starter"},
                options=CreateOptions(page_html=ARTICLE))  # fmt: skip
    for _ in range(3):  # indexing for meaning runs on the task queue
        if not run_tasks():
            break

    # Find the note by meaning: none of these words is in it.
    browser.get(f"{base}/library/?q=sourdough+loaves&mode=semantic")
    titles = [a.text for a in browser.find_elements(By.CSS_SELECTOR, ".row .title")]
    assert "Bread baking notes" in titles
    browser.get(f"{base}/library/?q=yeast+bakery&mode=semantic")
    assert "Bread baking notes" in [
        a.text for a in browser.find_elements(By.CSS_SELECTOR, ".row .title")
    ]
    browser.get(f"{base}/library/")
    _check(browser, axe_source, "list")

    # Read the captured page.
    browser.find_element(By.LINK_TEXT, "How to keep a sourdough starter").click()
    assert browser.find_element(By.CSS_SELECTOR, ".capture").text == "done"
    assert browser.find_element(By.CSS_SELECTOR, ".content h2").text == "Troubleshooting"
    _check(browser, axe_source, "read-captured")

    # Edit with a stale form: someone else saves first; nothing typed is lost.
    note_page = f"{base}/library/note/{note.pk}/"
    browser.get(note_page + "edit/")
    _check(browser, axe_source, "edit")
    update_item(owner=user, ref=ItemRef(Note, pk=note.pk), actor=ACTOR,
                data={"content": "Changed on another device."})  # fmt: skip
    content = browser.find_element(By.ID, "id_content")
    content.clear()
    content.send_keys("My rewritten notes about the levain.")
    _submit(browser, "#save-edit")
    assert (
        "Someone else changed this note" in browser.find_element(By.CSS_SELECTOR, ".conflict").text
    )
    mine = browser.find_element(By.ID, "id_content").get_attribute("value")
    assert mine == "My rewritten notes about the levain."
    assert "Changed on another device." in browser.find_element(By.CSS_SELECTOR, ".current").text
    _check(browser, axe_source, "edit-conflict")
    _submit(browser, "#save-edit")  # saved knowingly over the current one
    assert browser.current_url == note_page
    note.refresh_from_db()
    assert note.content == "My rewritten notes about the levain."

    # Share, open the link, stop sharing.
    _submit(browser, "#share-button")
    url = browser.find_element(By.ID, "share-url").get_attribute("value") or ""
    assert "/s/" in url
    assert Share.objects.filter(item_id=note.pk).exists()
    _check(browser, axe_source, "read-note")
    _submit(browser, "#unshare-button")
    assert not Share.objects.filter(item_id=note.pk).exists()
    assert browser.find_elements(By.ID, "share-url") == []
    browser.get(url)
    assert browser.find_element(By.TAG_NAME, "h1").text != "Bread baking notes"

    # Restore the first version from the history, then undo it.
    browser.get(note_page + "history/")
    _check(browser, axe_source, "history")
    browser.get(note_page + "history/1/")
    _check(browser, axe_source, "version")
    _submit(browser, "#restore-version")
    note.refresh_from_db()
    assert note.content.startswith("Bread baking notes\nKeep the levain fed")
    assert "Version 1 restored." in browser.find_element(By.CSS_SELECTOR, ".messages").text
    _submit(browser, "#undo-restore")
    note.refresh_from_db()
    assert note.content == "My rewritten notes about the levain."

    # Another person's item is a 404.
    other = get_user_model().objects.create_user(username="sam", password=PASSWORD)
    theirs = create_item(owner=other, model=Note, actor=ACTOR,
                         data={"title": "Sam's diary", "content": "private"})  # fmt: skip
    browser.get(f"{base}/library/note/{theirs.pk}/")
    assert "Sam's diary" not in browser.page_source
    assert "not found" in browser.title.lower() or "404" in browser.page_source

    # Link the note to the captured page with the picker: search, then one button (no script).
    create_item(owner=other, model=Note, actor=ACTOR,
                data={"title": "Sam's sourdough secrets", "content": "sourdough"})  # fmt: skip
    browser.get(note_page)
    browser.find_element(By.ID, "link-q").send_keys("sourdough")
    _submit(browser, "#link-q + button")
    assert browser.current_url.startswith(f"{base}/library/note/{note.pk}/links/?q=sourdough")
    picks = [a.text for a in browser.find_elements(By.CSS_SELECTOR, ".picks a")]
    assert picks == ["How to keep a sourdough starter"]  # Sam's items never show
    _check(browser, axe_source, "links")
    _submit(browser, ".picks button")
    assert "Linked." in browser.find_element(By.CSS_SELECTOR, ".messages").text
    assert "(linked)" in browser.find_element(By.CSS_SELECTOR, ".picks").text
    browser.get(note_page)
    linked = browser.find_element(By.CSS_SELECTOR, "[aria-labelledby=links-heading] ul").text
    assert "How to keep a sourdough starter" in linked
