"""Bad input Django itself used to answer with a 500 or an HTML page (SPEC §3.4): lone surrogates
in JSON keys, thousands of repeated query parameters, API writes without the trailing slash."""

from __future__ import annotations

import json
from typing import Any

import pytest

from content.models import Note

LONE = "\ud800"


def _raw(payload: Any) -> str:
    # json.dumps escapes the lone surrogate as \ud800: valid JSON text a client can send.
    text = json.dumps(payload)
    assert "\\ud800" in text
    return text


@pytest.fixture
def note(api: Any) -> dict[str, Any]:
    response = api.post("/api/notes/", {"title": "keep", "content": "one two"}, format="json")
    assert response.status_code == 201
    return response.json()


def _assert_validation_error(response: Any) -> dict[str, Any]:
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["error"] == "validation_error"
    assert "U+D800" in body["message"]
    return body


def test_a_lone_surrogate_as_a_top_level_key_is_a_validation_error(api: Any, owner: Any) -> None:
    body = _raw({"title": "ok", LONE: "x"})
    response = api.post("/api/notes/", body, content_type="application/json")
    err = _assert_validation_error(response)
    assert list(err["fields"]) == ["body"]
    assert not Note.objects.filter(owner=owner).exists()


def test_a_lone_surrogate_as_a_nested_key_is_a_validation_error(api: Any, owner: Any) -> None:
    body = _raw({"title": "ok", "arguments": [{"name": "a", LONE: 1}], "content": "x"})
    response = api.post("/api/prompts/", body, content_type="application/json")
    err = _assert_validation_error(response)
    assert list(err["fields"]) == ["arguments[0]"]


def test_a_lone_surrogate_key_in_a_patch_changes_nothing(api: Any, note: dict[str, Any]) -> None:
    body = _raw({"title": "changed", LONE: "x"})
    response = api.patch(f"/api/notes/{note['id']}/", body, content_type="application/json")
    _assert_validation_error(response)
    assert Note.objects.get(pk=note["id"]).title == "keep"


def test_a_lone_surrogate_key_in_str_replace_changes_nothing(
    api: Any, note: dict[str, Any]
) -> None:
    body = _raw({"edits": [{"old_str": "one", "new_str": "1", LONE: True}]})
    response = api.patch(
        f"/api/notes/{note['id']}/str-replace/", body, content_type="application/json"
    )
    err = _assert_validation_error(response)
    assert list(err["fields"]) == ["edits[0]"]
    assert Note.objects.get(pk=note["id"]).content == "one two"


def test_a_lone_surrogate_in_an_undeclared_nested_value_is_a_validation_error(
    api: Any, note: dict[str, Any]
) -> None:
    body = _raw({"edits": [{"old_str": "one", "new_str": "1"}], "x": {"y": [LONE]}})
    response = api.patch(
        f"/api/notes/{note['id']}/str-replace/", body, content_type="application/json"
    )
    err = _assert_validation_error(response)
    assert list(err["fields"]) == ["x.y[0]"]
    assert Note.objects.get(pk=note["id"]).content == "one two"


def test_find_surrogate_walks_deep_bodies_without_recursion() -> None:
    from tiddly.parsers import find_surrogate

    deep: Any = LONE
    for _ in range(5_000):
        deep = [deep]
    assert find_surrogate(deep) is not None
    assert find_surrogate({"a": ["é", {"b": "🙂"}]}) is None


# --- thousands of repeated query parameters ----------------------------------------------------


@pytest.mark.parametrize(
    ("path", "name", "value"),
    [
        ("/api/notes/", "tags", "x"),
        ("/api/content/", "type", "note"),
        ("/api/notes/", "view", "active"),
    ],
)
def test_thousands_of_repeated_parameters_are_a_json_validation_error(
    api: Any, note: dict[str, Any], path: str, name: str, value: str
) -> None:
    query = "&".join([f"{name}={value}"] * 5_000)
    response = api.get(f"{path}?{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["error"] == "validation_error"
    assert list(body["fields"]) == [name]
    assert "5000" in body["message"]
    assert "1000" in body["message"]  # the limit


# --- API writes without the trailing slash ------------------------------------------------------


@pytest.mark.parametrize("debug", [True, False])
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_an_api_write_without_the_slash_is_a_json_404_naming_the_slash_path(
    api: Any, owner: Any, settings: Any, debug: bool, method: str
) -> None:
    settings.DEBUG = debug
    response = getattr(api, method)("/api/notes", {"title": "x", "content": "y"}, format="json")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["error"] == "not_found"
    assert body["path"] == "/api/notes/"
    assert "/api/notes/" in body["message"]
    assert not Note.objects.filter(owner=owner).exists()


@pytest.mark.parametrize("debug", [True, False])
def test_a_read_without_the_slash_is_still_redirected(api: Any, settings: Any, debug: bool) -> None:
    settings.DEBUG = debug
    response = api.get("/api/notes?limit=1")
    assert response.status_code == 301
    assert response["Location"].endswith("/api/notes/?limit=1")
