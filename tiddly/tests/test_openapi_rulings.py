"""OpenAPI rulings of SPEC §3.4: what a list may answer, and empty enumerated parameters."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from tiddly.tests.test_openapi import schema

pytestmark = pytest.mark.django_db
__all__ = ["schema"]  # the module-scoped fixture, used by name


def test_every_operation_taking_filter_id_documents_its_404(schema: dict[str, Any]) -> None:
    taking = [
        (path, method)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if any(p.get("name") == "filter_id" for p in operation.get("parameters", []))
    ]
    assert len(taking) >= 4  # the three per-type lists and /api/content/
    undocumented = [
        (path, method)
        for path, method in taking
        if "404" not in schema["paths"][path][method]["responses"]
    ]
    assert undocumented == []


@pytest.mark.parametrize("name", ["sort_by", "sort_order", "tag_match"])
@pytest.mark.parametrize("route", ["note-list", "content-list"])
def test_an_empty_enumerated_query_parameter_is_a_400_naming_it(
    api: Any, route: str, name: str
) -> None:
    response = api.get(reverse(route), {name: ""})
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "validation_error"
    assert "Must not be empty" in body["fields"][name][0]
