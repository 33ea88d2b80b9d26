"""Real REST bodies match the OpenAPI schema the server serves (SPEC §3; issue: one representation).

Every endpoint is called with real data, success and error alike, and each JSON body is validated
against the response schema the served ``/api/schema/`` declares for that path, method and status.
A body with a key the schema does not allow, a missing required key, or a list declared where a
page object is returned fails here.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from content.history import Actor
from content.models import Bookmark, Note
from content.services import create_item
from prompts.models import Prompt

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def served_schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


def _openapi_to_jsonschema(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` as JSON Schema (``type`` plus ``"null"``), recursively,
    with every object closed to undeclared keys so an extra key fails like a missing one."""
    if isinstance(node, list):
        return [_openapi_to_jsonschema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _openapi_to_jsonschema(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    if out.get("type") == "object" and "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def _response_schema(schema: dict[str, Any], path: str, method: str, status: int) -> Any:
    operation = schema["paths"][path][method]
    response = operation["responses"][str(status)]
    body = response["content"]["application/json"]["schema"]
    components = _openapi_to_jsonschema(schema["components"])
    return {**_openapi_to_jsonschema(body), "components": components}


def check(schema: dict[str, Any], response: Any, path: str, method: str) -> Any:
    """Assert the body validates against the served schema; return the body."""
    body = response.json()
    declared = _response_schema(schema, path, method, response.status_code)
    jsonschema.validate(body, declared)
    return body


def _make(owner: Any) -> dict[str, Any]:
    actor = Actor()
    note = create_item(
        owner=owner,
        model=Note,
        data={"title": "Shopping", "content": "eggs\nmilk\neggs\n", "tags": ["home"]},
        actor=actor,
    )
    bookmark = create_item(
        owner=owner,
        model=Bookmark,
        data={"url": "https://example.com", "title": "Ex", "tags": ["web"]},
        actor=actor,
    )
    prompt = create_item(
        owner=owner,
        model=Prompt,
        data={
            "name": "greet",
            "content": "Hello {{ who }}",
            "arguments": [{"name": "who", "description": "Whom", "required": True}],
        },
        actor=actor,
    )
    return {"note": note, "bookmark": bookmark, "prompt": prompt}


def test_list_bodies_are_one_page_object_as_declared(
    api: APIClient, owner: Any, served_schema: dict[str, Any]
) -> None:
    _make(owner)
    for kind in ("notes", "bookmarks", "prompts", "content"):
        body = check(served_schema, api.get(f"/api/{kind}/"), f"/api/{kind}/", "get")
        assert isinstance(body, dict)
        assert body["count"] >= 1
    tags = check(served_schema, api.get("/api/tags/"), "/api/tags/", "get")
    assert {t["name"] for t in tags} == {"home", "web"}


@pytest.mark.parametrize(("kind", "key"), [("notes", "note"), ("bookmarks", "bookmark")])
def test_item_endpoint_bodies_match_the_schema(
    api: APIClient, owner: Any, served_schema: dict[str, Any], kind: str, key: str
) -> None:
    item = _make(owner)[key]
    detail = f"/api/{kind}/{{id}}/"
    url = f"/api/{kind}/{item.pk}/"
    check(served_schema, api.get(url), detail, "get")
    check(served_schema, api.get(url, {"start_line": 1, "end_line": 1}), detail, "get")
    check(served_schema, api.patch(url, {"title": "T2"}, format="json"), detail, "patch")
    check(served_schema, api.get(url + "search/", {"q": "e"}), detail + "search/", "get")
    check(served_schema, api.post(url + "archive/"), detail + "archive/", "post")
    check(served_schema, api.post(url + "unarchive/"), detail + "unarchive/", "post")
    shared = check(served_schema, api.post(url + "share/"), detail + "share/", "post")
    check(served_schema, api.post(url + "share/", {"rotate": True}, format="json"),
          detail + "share/", "post")  # fmt: skip
    assert check(served_schema, api.get(url), detail, "get")["share"]["url"] != shared["url"]
    listed = check(served_schema, api.get(f"/api/{kind}/"), f"/api/{kind}/", "get")
    assert listed["results"][0]["share"] is not None
    history = check(served_schema, api.get(url + "history/"), detail + "history/", "get")
    assert history["count"] >= 4  # create, update, share, share (rotated)
    version = detail + "history/{version}/"
    check(served_schema, api.get(url + "history/1/"), version, "get")
    check(served_schema, api.get(url + "history/2/diff/"), version + "diff/", "get")
    check(served_schema, api.post(url + "history/1/restore/"), version + "restore/", "post")
    api.delete(url)
    check(served_schema, api.post(url + "restore/"), detail + "restore/", "post")


def test_str_replace_and_prompt_bodies_match_the_schema(
    api: APIClient, owner: Any, served_schema: dict[str, Any]
) -> None:
    made = _make(owner)
    note_url = f"/api/notes/{made['note'].pk}/str-replace/"
    path = "/api/notes/{id}/str-replace/"
    ok = api.patch(note_url, {"old_str": "milk", "new_str": "oat milk"}, format="json")
    check(served_schema, ok, path, "patch")
    with_item = api.patch(
        note_url + "?include_updated_entity=true",
        {"old_str": "oat", "new_str": "soy"},
        format="json",
    )
    assert "item" in check(served_schema, with_item, path, "patch")

    prompt = made["prompt"]
    check(served_schema, api.get("/api/prompts/name/greet/"), "/api/prompts/name/{name}/", "get")
    rendered = api.post(
        f"/api/prompts/{prompt.pk}/render/", {"arguments": {"who": "Ada"}}, format="json"
    )
    assert check(served_schema, rendered, "/api/prompts/{id}/render/", "post") == {
        "rendered": "Hello Ada"
    }
    created = api.post(
        "/api/prompts/", {"name": "bye", "content": "Bye"}, format="json", HTTP_X_REQUEST_SOURCE="t"
    )
    assert created.status_code == 201
    check(served_schema, created, "/api/prompts/", "post")


def test_error_bodies_match_the_error_schema(
    api: APIClient, owner: Any, other_api: APIClient, served_schema: dict[str, Any]
) -> None:
    made = _make(owner)
    note = made["note"]
    path = "/api/notes/{id}/str-replace/"
    url = f"/api/notes/{note.pk}/str-replace/"
    several = api.patch(url, {"old_str": "eggs", "new_str": "x"}, format="json")
    assert several.status_code == 400
    assert check(served_schema, several, path, "patch")["error"] == "multiple_matches"
    missing = api.patch(url, {"old_str": "nope", "new_str": "x"}, format="json")
    assert check(served_schema, missing, path, "patch")["error"] == "no_match"
    stale = api.patch(
        url,
        {"old_str": "milk", "new_str": "x", "expected_updated_at": "2000-01-01T00:00:00Z"},
        format="json",
    )
    assert stale.status_code == 409
    assert check(served_schema, stale, path, "patch")["server_state"]["id"] == str(note.pk)
    hidden = other_api.get(f"/api/notes/{note.pk}/")
    assert hidden.status_code == 404
    check(served_schema, hidden, "/api/notes/{id}/", "get")
    taken = api.post(reverse("bookmark-list"), {"url": "https://example.com"}, format="json")
    assert taken.status_code == 409
    check(served_schema, taken, "/api/bookmarks/", "post")
