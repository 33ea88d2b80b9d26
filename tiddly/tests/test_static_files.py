"""With DEBUG off the admin works whether or not collectstatic ran (issue 13, item 6)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from tiddly.staticfiles import check_collected

pytestmark = pytest.mark.django_db


@pytest.fixture
def production(settings: Any, tmp_path: Path) -> Path:
    settings.DEBUG = False
    settings.WHITENOISE_USE_FINDERS = False
    settings.WHITENOISE_AUTOREFRESH = False
    settings.STATIC_ROOT = tmp_path / "static"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "tiddly.staticfiles.StaticStorage"},
    }
    return Path(settings.STATIC_ROOT)


def _stylesheet(html: str) -> str:
    match = re.search(r'href="(/static/admin/css/base[^"]*\.css)"', html)
    assert match, html
    return match.group(1)


def test_admin_login_works_when_static_files_were_not_collected(production: Path) -> None:
    client = Client()
    response = client.get("/admin/login/")
    assert response.status_code == 200
    css = _stylesheet(response.content.decode())
    assert css == "/static/admin/css/base.css"
    asset = client.get(css)
    assert asset.status_code == 200
    assert b"".join(asset.streaming_content).startswith(b"/*")  # type: ignore[attr-defined]


def test_missing_collectstatic_is_a_system_check_warning(production: Path) -> None:
    (warning,) = check_collected()
    assert warning.id == "tiddly.W001"
    assert "collectstatic" in warning.hint


def test_after_collectstatic_the_admin_uses_hashed_names_and_no_warning(production: Path) -> None:
    call_command("collectstatic", "--noinput", verbosity=0)
    assert check_collected() == []
    client = Client()
    css = _stylesheet(client.get("/admin/login/").content.decode())
    assert re.fullmatch(r"/static/admin/css/base\.[0-9a-f]{12}\.css", css)
    assert client.get(css).status_code == 200
