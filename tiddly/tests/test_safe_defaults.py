"""Safe by default (SPEC §10 Round 4, issue 29): `make run`'s environment serves no debug page,
and a start on 0.0.0.0 says which variable to set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh process with the environment `make run` gives (no DJANGO_DEBUG, no
# DJANGO_SECRET_KEY): what a visitor gets for an unknown page and for a foreign Host header.
VISIT = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
client = Client(raise_request_exception=False)
unknown = client.get("/no/such/page/")
foreign = client.get("/admin/", HTTP_HOST="evil.example")
print(json.dumps({
    "debug": settings.DEBUG,
    "unknown": [unknown.status_code, unknown.content.decode()],
    "foreign": [foreign.status_code, foreign.content.decode()],
}))
"""


@pytest.fixture
def make_run_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env["DJANGO_SETTINGS_MODULE"] = "tiddly.settings"
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    return env


def test_the_default_environment_serves_no_debug_page(make_run_env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", VISIT],
        cwd=ROOT,
        env=make_run_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["debug"] is False
    status, html = seen["unknown"]
    assert status == 404
    assert "<title>Page not found | Tiddly</title>" in html
    assert "URLconf" not in html
    assert "urlpatterns" not in html.lower()
    status, html = seen["foreign"]
    assert status == 400
    for secret in ("ALLOWED_HOSTS", "SECRET_KEY", "Traceback"):
        assert secret not in html


def test_django_debug_1_still_turns_the_debug_pages_on(make_run_env: dict[str, str]) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); "
            "from django.conf import settings; print(settings.DEBUG)",
        ],
        cwd=ROOT,
        env={**make_run_env, "DJANGO_DEBUG": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "True"


def _welcome(**options: Any) -> str:
    out = StringIO()
    call_command("tiddly_welcome", stdout=out, **options)
    return out.getvalue()


@pytest.mark.django_db
def test_a_start_on_every_interface_says_to_set_the_allowed_hosts(settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    text = _welcome(host="0.0.0.0", port="8000")
    assert "Listening on every interface" in text
    assert "DJANGO_ALLOWED_HOSTS=" in text
    assert "make run HOST=0.0.0.0 PORT=8000" in text
    assert "400 Bad Request" in text


@pytest.mark.django_db
def test_a_start_on_localhost_needs_no_advice(settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    assert "DJANGO_ALLOWED_HOSTS" not in _welcome(host="127.0.0.1", port="8000")
    settings.ALLOWED_HOSTS = ["*"]
    assert "DJANGO_ALLOWED_HOSTS" not in _welcome(host="0.0.0.0", port="8000")


@pytest.mark.django_db
def test_a_start_with_debug_on_warns(settings: Any) -> None:
    settings.DEBUG = True
    assert "DJANGO_DEBUG is on" in _welcome(host="127.0.0.1", port="8000")
    settings.DEBUG = False
    assert "DJANGO_DEBUG is on" not in _welcome(host="127.0.0.1", port="8000")


@pytest.mark.django_db
def test_even_with_debug_on_an_error_page_lists_no_settings(settings: Any) -> None:
    from django.test import Client

    settings.DEBUG = True
    response = Client(raise_request_exception=False).get("/admin/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    page = response.content.decode()
    assert "DisallowedHost" in page  # Django's debug page, for the developer who asked for it
    for name in ("SECRET_KEY", "INSTALLED_APPS", "DATABASES", "TIDDLY_MAX_WEBHOOKS"):
        assert name not in page
