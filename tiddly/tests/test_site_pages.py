"""The admin and the error pages look like Tiddly (SPEC §9): branding, favicon, 404 and 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, RequestFactory

from tiddly.urls import handler404, handler500

pytestmark = pytest.mark.django_db


def test_admin_pages_are_branded_tiddly(admin_client: Client) -> None:
    html = admin_client.get("/admin/").content.decode()
    assert '<div id="site-name"><a href="/admin/">Tiddly</a></div>' in html
    assert "<title>Your bookmarks, notes and prompts | Tiddly</title>" in html
    assert "Django administration" not in html
    assert "Django site admin" not in html


def test_admin_login_page_is_branded_and_has_a_favicon(client: Client) -> None:
    html = client.get("/admin/login/").content.decode()
    assert "Tiddly" in html
    assert "Django administration" not in html
    assert '<link rel="icon" type="image/svg+xml" href="/static/tiddly/favicon.svg">' in html
    assert client.get("/static/tiddly/favicon.svg").status_code == 200


def test_favicon_ico_redirects_to_the_icon(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == "/static/tiddly/favicon.svg"


def test_production_404_is_a_styled_tiddly_page(client: Client, settings: Any) -> None:
    settings.DEBUG = False
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "<title>Page not found | Tiddly</title>" in html
    assert "<code>/no/such/page/</code>" in html
    assert 'href="/admin/"' in html


def test_api_404_stays_json(client: Client, settings: Any) -> None:
    settings.DEBUG = False
    response = client.get("/api/nothing-here/")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_production_500_is_a_styled_tiddly_page() -> None:
    response = handler500(RequestFactory().get("/admin/"))
    assert response.status_code == 500
    html = response.content.decode()
    assert "<title>Server error | Tiddly</title>" in html
    assert "Try again" in html


def test_404_handler_renders_without_a_template_context() -> None:
    response = handler404(RequestFactory().get("/x/"), Exception())
    assert response.status_code == 404
    assert b"Page not found" in response.content
