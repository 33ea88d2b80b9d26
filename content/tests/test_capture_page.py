"""Capture from anywhere (SPEC §15): /capture/, its bookmarklet and the web-app manifest."""

from __future__ import annotations

import html
import json
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
    assert "script-src 'none'" in csp
    assert "unsafe-inline" not in csp
    assert "<script" not in body
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
    assert "http://testserver/capture/?url=" in script
    assert "encodeURIComponent(location.href)" in script
