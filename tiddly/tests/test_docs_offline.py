"""Swagger UI and ReDoc are served by this process (drf-spectacular-sidecar), not a CDN."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

# Every src/href that leaves the site: an absolute or protocol-relative URL.
EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", re.IGNORECASE)


@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_docs_pages_load_no_script_or_style_from_another_site(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    html = response.content.decode()
    assert not EXTERNAL.findall(html), html
    assert "cdn.jsdelivr.net" not in html
    assert "/static/drf_spectacular_sidecar/" in html


@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_the_docs_assets_they_reference_are_served(client: Client, path: str) -> None:
    html = client.get(path).content.decode()
    assets = re.findall(r"""["'](/static/drf_spectacular_sidecar/[^"']+)["']""", html)
    assert assets
    for asset in assets:
        response: Any = client.get(asset)
        assert response.status_code == 200, asset
