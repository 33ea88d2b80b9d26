"""Share pages and the capture page in a real browser (issues 19 and 21).

The share page gets content written to attack its visitors — a script, an ``onerror`` handler,
``javascript:`` links, raw HTML — and the browser must run none of it; the capture page is used
by a user without staff rights, from the login redirect to the saved bookmark.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from browser_tests.conftest import PASSWORD
from content.history import Actor
from content.models import Bookmark, Note
from content.queries import ItemRef
from content.services import create_item
from content.services.sharing import share_item

ACTOR = Actor(source="test")
ATTACK = """# Shared findings

<script>document.title = "pwned"; window.pwned = 1; alert("script")</script>
<img src=x onerror="window.pwned = 2; document.title = 'pwned'">
<a href="javascript:window.pwned=3">raw link</a>
[a markdown link](javascript:window.pwned=4) and [an autolink](<javascript:alert(5)>)
<svg onload="window.pwned=6"></svg>
![image](javascript:window.pwned=7)

[a safe link](https://example.com/safe)
"""


def _no_alert(browser: WebDriver) -> bool:
    try:
        browser.switch_to.alert.dismiss()
    except NoAlertPresentException:
        return True
    return False


def test_hostile_content_does_not_run_on_the_share_page(
    browser: WebDriver, live_server: Any, transactional_db: None
) -> None:
    owner = get_user_model().objects.create_user(username="sam", password=PASSWORD)
    note = create_item(
        owner=owner,
        model=Note,
        data={"title": "Findings <script>window.pwned=8</script>", "content": ATTACK,
              "description": '"><img src=x onerror="window.pwned=9">'},
        actor=ACTOR,
    )  # fmt: skip
    share = share_item(owner=owner, ref=ItemRef(Note, pk=note.pk), actor=ACTOR).share
    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/s/{share.token}")
    heading = browser.find_element(By.CSS_SELECTOR, ".content h1")
    assert heading.text == "Shared findings"
    assert _no_alert(browser)
    assert browser.title == "Findings <script>window.pwned=8</script> | Tiddly"
    assert browser.execute_script("return typeof window.pwned") == "undefined"
    # The attack text is shown as text, and nothing in the page is script-bearing markup.
    content = browser.find_element(By.CSS_SELECTOR, ".content")
    assert "<script>" in content.text
    assert "onerror" in content.text
    for tag in ("script", "svg", "iframe", "object", "embed"):
        assert browser.find_elements(By.CSS_SELECTOR, f"main {tag}") == []
    hrefs = [a.get_attribute("href") or "" for a in browser.find_elements(By.CSS_SELECTOR, "a")]
    assert "https://example.com/safe" in hrefs
    assert not [h for h in hrefs if h.lower().startswith(("javascript:", "data:", "vbscript:"))]
    for element in browser.find_elements(By.CSS_SELECTOR, "main *"):
        attributes = browser.execute_script(
            "return Array.from(arguments[0].attributes).map(a => a.name)", element
        )
        assert not [name for name in attributes if name.lower().startswith("on")]
    # The page's own stylesheet applies (served as a file: the CSP allows no inline style).
    background = browser.find_element(By.TAG_NAME, "header").value_of_css_property(
        "background-color"
    )
    assert background == "rgba(38, 75, 93, 1)"
    # Clicking every link that stays on the page runs nothing either.
    browser.find_element(By.LINK_TEXT, "View as Markdown").click()
    assert _no_alert(browser)
    assert "<script>document.title" in browser.find_element(By.TAG_NAME, "body").text


def test_capture_page_for_a_user_without_staff_rights(
    browser: WebDriver, live_server: Any, transactional_db: None
) -> None:
    user = get_user_model().objects.create_user(username="robin", password=PASSWORD)
    assert not user.is_staff
    browser.delete_all_cookies()
    page = "https://example.com/articles/1"
    browser.get(f"{live_server.url}/capture/?url={page}&title=An%20article")
    # Anonymous: the project's login page, which comes back here after signing in.
    assert "/oauth/login" in browser.current_url
    browser.find_element(By.NAME, "username").send_keys("robin")
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    assert browser.find_element(By.ID, "id_url").get_attribute("value") == page
    assert browser.find_element(By.ID, "id_title").get_attribute("value") == "An article"
    bookmarklet = browser.find_element(By.ID, "bookmarklet").get_attribute("href") or ""
    assert bookmarklet.startswith("javascript:")
    browser.find_element(By.ID, "id_description").send_keys("Worth a re-read")
    browser.find_element(By.ID, "id_tags").send_keys("reading, later")
    browser.find_element(By.ID, "capture-save").click()
    # Saved: it opens in the person's library.
    assert browser.find_element(By.ID, "item-title").text == "An article"
    bookmark = Bookmark.objects.get(owner=user)
    assert browser.current_url == f"{live_server.url}/library/bookmark/{bookmark.pk}/"
    assert (bookmark.url, bookmark.title, bookmark.description) == (
        page, "An article", "Worth a re-read"
    )  # fmt: skip
    assert bookmark.tag_names() == ["later", "reading"]
    # The same URL again opens the saved bookmark instead of a second one.
    browser.get(f"{live_server.url}/capture/?url={page}&title=Other")
    assert browser.find_element(By.ID, "capture-status").text.lower() == "already in your bookmarks"
    assert browser.find_element(By.ID, "bookmark-title").text == "An article"
    assert Bookmark.objects.filter(owner=user).count() == 1
