"""The bookmarklet in a real browser (issue 29): it hands the capture page the tab's rendered
HTML across origins, and a page over the limit falls back to the URL, saying so."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

import pytest
from django.contrib.auth import get_user_model
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from browser_tests.conftest import PASSWORD, log_in
from content.models import Bookmark
from content.pages.capture import bookmarklet
from content.services import capture

ARTICLE = b"""<!doctype html><html><head><title>Members-only plan</title></head><body>
<article><h1>Quarterly plan</h1><p>Only signed-in members see this paragraph, which the
server could never fetch itself; it has words enough to be the page's main text.</p>
<p id="added"></p></article>
<script>document.getElementById("added").textContent = "Added by the page's own script.";</script>
</body></html>"""


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(ARTICLE)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def other_site() -> Iterator[str]:
    """A page on another origin than Tiddly's (the site the person is reading)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/plan"
    server.shutdown()
    server.server_close()


def _click_bookmarklet(browser: WebDriver, origin: str) -> None:
    """What clicking the bookmark does: run its script in the page being read."""
    script = unquote(bookmarklet(origin).removeprefix("javascript:"))
    before = set(browser.window_handles)
    browser.execute_script(script)
    WebDriverWait(browser, 10).until(lambda b: len(set(b.window_handles) - before) == 1)
    browser.switch_to.window((set(browser.window_handles) - before).pop())


def _status(browser: WebDriver, words: str) -> str:
    WebDriverWait(browser, 10).until(lambda b: words in b.find_element(By.ID, "page-status").text)
    return str(browser.find_element(By.ID, "page-status").text)


@pytest.fixture
def reader(browser: WebDriver, live_server: Any, transactional_db: None) -> Iterator[Any]:
    user = get_user_model().objects.create_user(username="reader", password=PASSWORD, is_staff=True)
    log_in(browser, live_server.url, user.username)
    first = browser.current_window_handle
    yield user
    for handle in browser.window_handles:
        if handle != first:
            browser.switch_to.window(handle)
            browser.close()
    browser.switch_to.window(first)


def test_the_bookmarklet_saves_the_page_as_the_person_sees_it(
    browser: WebDriver, live_server: Any, reader: Any, other_site: str
) -> None:
    browser.get(other_site)
    _click_bookmarklet(browser, live_server.url)
    assert "will be saved with the bookmark" in _status(browser, "characters")
    browser.find_element(By.ID, "capture-save").click()
    browser.find_element(By.ID, "item-title")  # landed on it in the library
    bookmark = Bookmark.objects.get(owner=reader)
    assert bookmark.url == other_site
    assert bookmark.title == "Members-only plan"
    assert "Only signed-in members see this paragraph" in bookmark.content
    assert "Added by the page's own script." in bookmark.content  # rendered, after scripts
    assert bookmark.capture.status == "done"


def test_a_page_over_the_limit_is_saved_by_its_url_and_says_so(
    browser: WebDriver, live_server: Any, reader: Any, other_site: str, monkeypatch: Any
) -> None:
    monkeypatch.setattr(capture, "PAGE_HTML_MAX_CHARS", 100)
    browser.get(other_site)
    _click_bookmarklet(browser, live_server.url)
    assert "too large to send" in _status(browser, "too large")
    assert browser.find_element(By.ID, "id_page_html").get_attribute("value") == ""
    browser.find_element(By.ID, "capture-save").click()
    browser.find_element(By.ID, "item-title")
    bookmark = Bookmark.objects.get(owner=reader)
    assert bookmark.content is None
    assert bookmark.capture.status == "pending"  # fetched from its URL in the background
