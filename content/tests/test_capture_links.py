"""A capture keeps only http, https and mailto links (SPEC §15, issue 29): what REST and MCP hand
out of a captured page holds no ``javascript:`` link, whichever way the page came."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from content.models import Bookmark
from tiddly.tests.outbound_servers import LocalServer, allowed_server

pytestmark = pytest.mark.django_db

PAGE = (
    "<html><head><title>T</title></head><body><article><h2>Plan</h2><p>The body of the page "
    'with <a href="javascript:alert(1)">click me</a> and <a href="https://ok.example/">fine '
    "link</a> in a long enough paragraph of real text.</p><p>Another paragraph of real text, "
    "so the extractor keeps it, with more words.</p></article></body></html>"
)


@pytest.fixture
def server(settings: Any) -> Iterator[LocalServer]:
    with allowed_server(settings, timeout=1) as srv:
        yield srv


def test_page_html_keeps_the_text_of_a_javascript_link_and_the_https_link(api: Any) -> None:
    response = api.post(
        "/api/bookmarks/", {"url": "https://e.com/plan", "page_html": PAGE}, format="json"
    )
    assert response.status_code == 201, response.json()
    content = response.json()["content"]
    assert "javascript:" not in content
    assert "click me" in content
    assert "[fine link](https://ok.example/)" in content
    assert "javascript:" not in Bookmark.objects.get().content


def test_a_fetched_markdown_page_loses_its_javascript_link(
    api: Any, server: LocalServer, run_tasks: Any
) -> None:
    response = api.post("/api/bookmarks/", {"url": server.url + "/markdown-links"}, format="json")
    assert response.status_code == 201
    run_tasks(due_within=15)
    body = api.get(f"/api/bookmarks/{response.json()['id']}/").json()
    assert body["capture"]["status"] == "done"
    assert body["content"] == "# Links\n\nrun [ok](https://example.com/)"
