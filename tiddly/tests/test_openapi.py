"""The OpenAPI schema validates without warnings and documents every path and error (SPEC §3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command

pytestmark = pytest.mark.django_db

ERROR_REF = "#/components/schemas/ErrorOut"

ITEM_PATHS = [
    "/api/{kind}/",
    "/api/{kind}/{{id}}/",
    "/api/{kind}/{{id}}/archive/",
    "/api/{kind}/{{id}}/unarchive/",
    "/api/{kind}/{{id}}/restore/",
    "/api/{kind}/{{id}}/track-usage/",
    "/api/{kind}/{{id}}/search/",
    "/api/{kind}/{{id}}/str-replace/",
]
SPEC_PATHS = {
    **{
        path.format(kind=kind): None
        for kind in ("notes", "bookmarks", "prompts")
        for path in ITEM_PATHS
    },
    "/api/prompts/name/{name}/": None,
    "/api/prompts/name/{name}/str-replace/": None,
    "/api/prompts/{id}/render/": None,
    "/api/content/": None,
    "/api/tags/": None,
    "/api/tags/{name}/": None,
    "/api/tokens/": None,
    "/api/tokens/{id}/": None,
}


@pytest.fixture(scope="module")
def schema(tmp_path_factory: Any, django_db_blocker: Any) -> dict[str, Any]:
    path = Path(tmp_path_factory.mktemp("schema")) / "schema.yaml"
    with django_db_blocker.unblock():
        call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return yaml.safe_load(path.read_text())


def _ref(response: dict[str, Any]) -> str | None:
    return response.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref")


def test_schema_validates_without_warnings(schema: dict[str, Any]) -> None:
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "Tiddly API"


def test_schema_documents_every_path_of_the_spec(schema: dict[str, Any]) -> None:
    normalised = {path.replace("{pk}", "{id}") for path in schema["paths"]}
    missing = sorted(set(SPEC_PATHS) - normalised)
    assert missing == []


def test_every_operation_documents_its_error_bodies(schema: dict[str, Any]) -> None:
    problems = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in {"get", "post", "patch", "delete", "put"}:
                continue
            responses = operation["responses"]
            for code in ("401", "429"):
                if _ref(responses.get(code, {})) != ERROR_REF:
                    problems.append(f"{method.upper()} {path} {code}")
            for code, response in responses.items():
                if code.startswith(("4", "5")) and _ref(response) != ERROR_REF:
                    problems.append(f"{method.upper()} {path} {code} not the Error schema")
    assert problems == []


@pytest.mark.parametrize(
    ("path", "method", "codes"),
    [
        ("/api/notes/{id}/", "get", {"404"}),
        ("/api/notes/{id}/", "patch", {"400", "404", "409", "412"}),
        ("/api/bookmarks/", "post", {"400", "409"}),
        ("/api/prompts/{id}/restore/", "post", {"400", "404", "409"}),
        ("/api/prompts/{id}/render/", "post", {"400", "404"}),
        ("/api/tags/{name}/", "patch", {"400", "404", "409"}),
        ("/api/tokens/", "post", {"400", "403"}),
    ],
)
def test_specific_error_responses_are_documented(
    schema: dict[str, Any], path: str, method: str, codes: set[str]
) -> None:
    paths = {p.replace("{pk}", "{id}"): ops for p, ops in schema["paths"].items()}
    responses = paths[path][method]["responses"]
    assert codes <= set(responses)
    for code in codes:
        assert _ref(responses[code]) == ERROR_REF


def test_error_schema_has_the_contract_fields(schema: dict[str, Any]) -> None:
    error = schema["components"]["schemas"]["ErrorOut"]
    assert {"error", "message"} <= set(error["required"])
    assert {
        "fields",
        "server_state",
        "existing_id",
        "suggestion",
        "matches",
        "field",
        "limit",
    } <= set(error["properties"])


def test_list_parameters_are_documented(schema: dict[str, Any]) -> None:
    params = {p["name"] for p in schema["paths"]["/api/content/"]["get"]["parameters"]}
    assert {
        "q",
        "tags",
        "tag_match",
        "view",
        "sort_by",
        "sort_order",
        "limit",
        "offset",
        "type",
    } <= params


def test_bearer_authentication_is_documented(schema: dict[str, Any]) -> None:
    scheme = schema["components"]["securitySchemes"]["bearerAuth"]
    assert scheme == {"type": "http", "scheme": "bearer", "bearerFormat": "tdly_… or OAuth tdlo_…"}


def test_schema_and_docs_are_served(client: Any) -> None:
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200
    assert client.get("/api/redoc/").status_code == 200
