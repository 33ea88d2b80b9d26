"""Capture from anywhere (SPEC §15): /capture/, its bookmarklet and the web-app manifest."""

from __future__ import annotations

import html
import json
import re
from typing import Any
from urllib.parse import unquote

from django.test import Client

from content.models import Bookmark, ItemVersion
from content.pages.capture import first_url


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_anonymous_visitors_go_to_the_login_page_with_next(db: None) -> None:
    response = Client().get("/capture/?url=https://example.com/a")
    assert response.status_code == 302
    assert response["Location"].startswith("/oauth/login?next=/capture/")


def test_any_signed_in_user_gets_the_form_prefilled(owner: Any) -> None:
    assert not owner.is_staff
    response = _client(owner).get("/capture/?url=https://example.com/a&title=A%20page")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'value="https://example.com/a"' in body
    assert 'value="A page"' in body
    assert 'rel="manifest" href="/manifest.webmanifest"' in body
    assert 'id="bookmarklet" href="javascript:' in body
    csp = response["Content-Security-Policy"]
    # One script of the site's own (it receives the page from the bookmarklet), none inline.
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert re.findall(r"<script[^>]*>", body) == ['<script src="/static/tiddly/capture.js" defer>']
    assert " style=" not in body
    assert not Bookmark.objects.exists()


def test_saving_creates_the_bookmark_through_the_service(owner: Any) -> None:
    response = _client(owner).post(
        "/capture/",
        {"url": "https://example.com/a", "title": "A", "description": "why", "tags": "x, y z"},
    )
    bookmark = Bookmark.objects.get(owner=owner)
    # The person lands on it in their library.
    assert response.status_code == 303
    assert response["Location"] == f"/library/bookmark/{bookmark.pk}/"
    assert (bookmark.url, bookmark.title, bookmark.description) == (
        "https://example.com/a", "A", "why"
    )  # fmt: skip
    assert bookmark.tag_names() == ["x", "y", "z"]
    version = ItemVersion.objects.get(item_id=bookmark.pk)
    assert version.source == "capture-page"


def test_an_existing_url_opens_the_saved_bookmark(owner: Any, other: Any) -> None:
    client = _client(owner)
    client.post("/capture/", {"url": "https://example.com/a", "title": "First"})
    response = client.get("/capture/?url=https://example.com/a&title=Again")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Already in your bookmarks" in body
    assert "First" in body
    assert 'id="admin-link"' not in body  # not staff
    assert 'id="library-link"' in body
    assert Bookmark.objects.count() == 1
    # A second POST does not duplicate either.
    assert client.post("/capture/", {"url": "https://example.com/a"}).status_code == 200
    assert Bookmark.objects.count() == 1
    # Another user's bookmark of the same URL is theirs alone.
    assert (
        "Already" not in _client(other).get("/capture/?url=https://example.com/a").content.decode()
    )


def test_staff_get_a_link_to_the_admin_page(staff: Any) -> None:
    client = _client(staff)
    client.post("/capture/", {"url": "https://example.com/a"})
    body = client.get("/capture/?url=https://example.com/a").content.decode()
    bookmark = Bookmark.objects.get()
    assert f'href="/admin/content/bookmark/{bookmark.pk}/change/"' in body


def test_bad_url_re_renders_the_form_with_the_reason(owner: Any) -> None:
    response = _client(owner).post("/capture/", {"url": "javascript:alert(1)", "tags": "a"})
    assert response.status_code == 400
    assert "valid http:// or https:// URL" in response.content.decode()
    assert not Bookmark.objects.exists()


def test_share_sheet_text_supplies_the_url(owner: Any) -> None:
    text = "Look at this https://example.com/story?id=4. via App"
    body = _client(owner).get("/capture/", {"text": text, "title": "Story"}).content.decode()
    assert 'value="https://example.com/story?id=4"' in body
    assert first_url("no link here") == ""
    assert first_url("(see https://a.example/x)") == "https://a.example/x"


def test_the_manifest_has_a_share_target(db: None) -> None:
    response = Client().get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/manifest+json"
    manifest = json.loads(response.content)
    assert manifest["share_target"] == {
        "action": "/capture/",
        "method": "GET",
        "params": {"title": "title", "text": "text", "url": "url"},
    }
    assert manifest["start_url"] == "/capture/"


def test_the_admin_index_offers_the_bookmarklet(staff_client: Client) -> None:
    body = staff_client.get("/admin/").content.decode()
    assert 'id="admin-bookmarklet" href="javascript:' in body
    start = body.index('id="admin-bookmarklet" href="') + len('id="admin-bookmarklet" href="')
    script = unquote(html.unescape(body[start : body.index('"', start)]))
    assert 'var o="http://testserver"' in script
    assert "w.postMessage(" in script


def _bookmarklet_script(body: str) -> str:
    start = body.index('id="bookmarklet" href="') + len('id="bookmarklet" href="')
    return unquote(html.unescape(body[start : body.index('"', start)])).removeprefix("javascript:")


def test_the_bookmarklet_hands_the_rendered_page_to_the_capture_page(owner: Any) -> None:
    script = _bookmarklet_script(_client(owner).get("/capture/").content.decode())
    assert 'var o="http://testserver"' in script
    assert "document.documentElement.outerHTML" in script
    assert "new Blob([h]).size" in script  # the page's size in bytes, checked against §15's limit
    assert "n>5000000?{tiddly:'page',url:u,too_large:n}:{tiddly:'page',url:u,html:h}" in script
    assert "e.source!==w||e.origin!==o" in script  # only the capture page it opened asks
    assert "&via=bookmarklet" in script


def test_the_capture_page_opened_by_the_bookmarklet_waits_for_the_page(owner: Any) -> None:
    response = _client(owner).get("/capture/?url=https://intranet.example/a&via=bookmarklet")
    body = response.content.decode()
    assert response["Cross-Origin-Opener-Policy"] == "unsafe-none"  # keeps its opener
    assert 'data-url="https://intranet.example/a"' in body
    assert 'data-max="5000000"' in body
    assert '<textarea name="page_html" id="id_page_html" hidden></textarea>' in body
    assert 'id="page-status"' in body
    assert 'enctype="multipart/form-data"' in body


GUIDE = """<html><head><title>Members only</title></head><body><article>
<h1>Quarterly plan</h1><p>Only signed-in members see this paragraph of the plan, with enough
words for the extractor to keep it as the main text of the page.</p></article></body></html>"""


def test_a_page_sent_with_the_form_is_saved_as_page_html(owner: Any) -> None:
    response = _client(owner).post(
        "/capture/",
        {"url": "https://intranet.example/plan", "title": "", "page_html": GUIDE},
    )
    assert response.status_code == 303
    bookmark = Bookmark.objects.get(owner=owner)
    assert bookmark.title == "Members only"
    assert "Only signed-in members see this paragraph" in bookmark.content
    assert bookmark.capture.status == "done"
    assert bookmark.capture.final_url == "https://intranet.example/plan"


def test_a_page_over_the_limit_is_refused_on_the_form(owner: Any, settings: Any) -> None:
    from content.services import capture

    response = _client(owner).post(
        "/capture/",
        {"url": "https://example.com/big", "page_html": "x" * (capture.PAGE_HTML_MAX_CHARS + 1)},
    )
    assert response.status_code == 400
    assert "page_html" in response.content.decode()
    assert not Bookmark.objects.exists()
