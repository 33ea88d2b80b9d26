"""GET /api/ links to every resource, the docs, the schema and the MCP servers (SPEC §3.2)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

BASE = "http://testserver"
EXPECTED = {
    "bookmarks": f"{BASE}/api/bookmarks/",
    "notes": f"{BASE}/api/notes/",
    "prompts": f"{BASE}/api/prompts/",
    "content": f"{BASE}/api/content/",
    "tags": f"{BASE}/api/tags/",
    "filters": f"{BASE}/api/filters/",
    "relationships": f"{BASE}/api/relationships/",
    "export": f"{BASE}/api/export/",
    "import": f"{BASE}/api/import/",
    "skills_export": f"{BASE}/api/prompts/export/skills/",
    "history_revert": f"{BASE}/api/history/revert/",
    "search": f"{BASE}/api/search/",
    "search_status": f"{BASE}/api/search/status/",
    "tokens": f"{BASE}/api/tokens/",
    "bookmark_preview": f"{BASE}/api/bookmarks/preview/",
    "bookmark_capture": f"{BASE}/api/bookmarks/{{id}}/capture/",
    "changes": f"{BASE}/api/changes/",
    "webhooks": f"{BASE}/api/webhooks/",
    "schema": f"{BASE}/api/schema/",
    "docs": f"{BASE}/api/docs/",
    "redoc": f"{BASE}/api/redoc/",
    "admin": f"{BASE}/admin/",
    "capture": f"{BASE}/capture/",
    "mcp": {"content": f"{BASE}/mcp/content", "prompts": f"{BASE}/mcp/prompts"},
}


def test_api_root_answers_anonymous_callers_with_every_link(anon: APIClient) -> None:
    response = anon.get("/api/", format="json")
    assert response.status_code == 200
    assert response.json() == EXPECTED


@pytest.mark.parametrize("client", ["api", "session_api"])
def test_api_root_answers_signed_in_callers_the_same(client: str, request: Any) -> None:
    response = request.getfixturevalue(client).get("/api/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response.json() == EXPECTED


def test_every_link_of_the_api_root_leads_somewhere(api: APIClient) -> None:
    links = api.get("/api/", format="json").json()
    for url in [*(v for v in links.values() if isinstance(v, str)), *links["mcp"].values()]:
        path = url.removeprefix(BASE)
        status = api.get(path).status_code
        # /mcp/* answers a GET without an SSE Accept header with 405/406; never a 404.
        assert status != 404, path


def test_api_root_is_in_the_openapi_schema(anon: APIClient) -> None:
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/"]["get"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ApiRootOut"
    }
    assert set(schema["components"]["schemas"]["ApiRootOut"]["properties"]) == set(EXPECTED)


def test_api_without_the_slash_redirects_to_the_root(anon: APIClient) -> None:
    response = anon.get("/api")
    assert response.status_code == 301
    assert response["Location"] == "/api/"


def _api_collections() -> set[str]:
    """Every parameter-free route under /api/ in the URL map (a list, collection or action)."""
    from django.urls import URLPattern, URLResolver, get_resolver

    def walk(resolver: URLResolver, prefix: str) -> set[str]:
        found: set[str] = set()
        for entry in resolver.url_patterns:
            route = prefix + str(entry.pattern).lstrip("^").rstrip("$")
            if isinstance(entry, URLResolver):
                found |= walk(entry, route)
            elif isinstance(entry, URLPattern) and "<" not in route and "(" not in route:
                found.add("/" + route)
        return found

    return {p for p in walk(get_resolver(), "") if p.startswith("/api/") and p != "/api/"}


def test_every_collection_under_api_is_linked_from_the_root(anon: APIClient) -> None:
    links = anon.get("/api/", format="json").json()
    linked = {v.removeprefix(BASE) for v in links.values() if isinstance(v, str)}
    missing = _api_collections() - linked
    assert not missing, f"GET /api/ does not link {sorted(missing)}: add them to tiddly/root.py"
