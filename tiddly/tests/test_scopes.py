"""Scopes on API tokens and their enforcement on REST (SPEC §8.1)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from content.tests.helpers import assert_error
from tiddly.auth import SESSION, Principal
from tiddly.errors import Forbidden
from tiddly.models import ApiToken
from tiddly.scopes import readable_areas, require_scope

pytestmark = pytest.mark.django_db


def client_with(owner: Any, *scopes: str) -> APIClient:
    _, plaintext = ApiToken.issue(owner=owner, name="t", scopes=" ".join(scopes))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


def test_a_read_only_token_reads_but_cannot_write(owner: Any) -> None:
    api = client_with(owner, "content:read")
    assert api.get("/api/notes/").status_code == 200
    assert api.get("/api/bookmarks/").status_code == 200
    body = assert_error(api.post("/api/notes/", {"title": "x"}, format="json"), 403, "forbidden")
    assert "'content:write'" in body["message"]


def test_a_prompts_only_token_cannot_see_content(owner: Any) -> None:
    api = client_with(owner, "prompts:read", "prompts:write")
    assert api.get("/api/prompts/").status_code == 200
    body = assert_error(api.get("/api/notes/"), 403, "forbidden")
    assert "'content:read'" in body["message"]


def test_a_write_only_token_cannot_read(owner: Any) -> None:
    api = client_with(owner, "content:write")
    assert api.post("/api/notes/", {"title": "x"}, format="json").status_code == 201
    assert_error(api.get("/api/notes/"), 403, "forbidden")


def test_sessions_have_every_scope(session_api: Any) -> None:
    assert session_api.post("/api/notes/", {"title": "x"}, format="json").status_code == 201
    assert session_api.get("/api/tags/").status_code == 200


def test_tokens_api_creates_a_token_with_scopes(session_api: Any) -> None:
    response = session_api.post(
        "/api/tokens/", {"name": "reader", "scopes": ["content:read"]}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["scopes"] == ["content:read"]
    assert ApiToken.objects.get().scopes == "content:read"
    bad = session_api.post("/api/tokens/", {"name": "x", "scopes": ["admin"]}, format="json")
    assert_error(bad, 400, "validation_error")


def test_an_oauth_or_api_token_cannot_manage_api_tokens(api: Any) -> None:
    assert_error(api.get("/api/tokens/"), 403, "forbidden")


def test_create_token_takes_repeatable_scopes(owner: Any) -> None:
    out = StringIO()
    call_command(
        "create_token", "owner", "--scope", "prompts:read", "--scope", "content:read", stdout=out
    )
    assert ApiToken.objects.get().scopes == "content:read prompts:read"


def test_require_scope_raises_forbidden_naming_the_scope() -> None:
    reader = Principal(kind="api_token", scopes=frozenset({"prompts:read"}))
    require_scope(reader, "prompts:read")
    require_scope(SESSION, "content:write")
    with pytest.raises(Forbidden, match="prompts:write"):
        require_scope(reader, "prompts:write")
    assert readable_areas(reader) == ["prompts"]
    assert readable_areas(None) == ["content", "prompts"]
