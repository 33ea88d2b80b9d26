"""The Origin check on /mcp/* (SPEC §7 Interoperability: DNS-rebinding defence)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tiddly.models import ApiToken

pytestmark = pytest.mark.django_db
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture
def token(owner: Any) -> str:
    return ApiToken.issue(owner=owner, name="t")[1]


def call(token: str, origin: str | None, path: str = "/mcp/content") -> Any:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if origin is not None:
        headers["Origin"] = origin
    return Client(headers=headers).post(path, LIST, content_type="application/json")


@pytest.mark.parametrize("path", ["/mcp/content", "/mcp/prompts"])
def test_a_foreign_origin_is_403_even_with_a_valid_token(token: str, path: str) -> None:
    response = call(token, "http://evil.example", path)
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"


def test_a_foreign_origin_is_refused_before_authentication(client: Client) -> None:
    response = client.post("/mcp/content", LIST, "application/json", HTTP_ORIGIN="null")
    assert response.status_code == 403


def test_no_origin_and_the_servers_own_origin_pass(token: str) -> None:
    assert call(token, None).status_code == 200
    assert call(token, "http://testserver").status_code == 200


def test_configured_origins_pass(token: str, settings: Any) -> None:
    settings.TIDDLY_ALLOWED_ORIGINS = ["http://localhost:6274"]
    settings.TIDDLY_PUBLIC_URL = "https://tiddly.example.com"
    assert call(token, "http://localhost:6274").status_code == 200
    assert call(token, "https://tiddly.example.com").status_code == 200
    assert call(token, "http://localhost:6275").status_code == 403


def test_the_rest_api_is_not_origin_checked(token: str) -> None:
    client = Client(headers={"Authorization": f"Bearer {token}", "Origin": "http://x.example"})
    assert client.get("/api/notes/").status_code == 200
