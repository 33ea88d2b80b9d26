"""Hostile and sloppy input never yields a 500 (SPEC §3.4): every write endpoint and every list.

Each bad request must get a 4xx with the `{error, message}` envelope and must leave the database
exactly as it was. A control test per endpoint proves the *valid* body is accepted, so each 4xx is
caused by the one thing the case corrupts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from content.tests.factories import BookmarkFactory, NoteFactory, PromptFactory, TagFactory
from content.tests.helpers import db_state
from tiddly.models import ApiToken

pytestmark = pytest.mark.django_db

PAST = timedelta(hours=1)


@pytest.fixture
def world(owner: Any) -> dict[str, Any]:
    past = timezone.now() - PAST
    token, _ = ApiToken.issue(owner=owner, name="laptop")
    return {
        "note": NoteFactory(owner=owner, content="Hello world", tags=["t"]),
        "bookmark": BookmarkFactory(owner=owner, content="Hello world"),
        "prompt": PromptFactory(owner=owner, name="greet"),
        "archived": NoteFactory(owner=owner, archived_at=past),
        "deleted": NoteFactory(owner=owner, deleted_at=past),
        "tag": TagFactory(owner=owner, name="t"),
        "token": token,
    }


def state() -> dict[str, Any]:
    return {
        **db_state(),
        "tokens": sorted(
            (str(pk), name, str(exp))
            for pk, name, exp in ApiToken.objects.values_list("id", "name", "expires_at")
        ),
    }


@dataclass(frozen=True)
class Endpoint:
    id: str
    method: str
    url: Callable[[dict[str, Any]], str]
    valid: dict[str, Any]
    session: bool = False  # /api/tokens/ refuses tokens
    text: tuple[str, ...] = ()
    tags: bool = False
    arguments: bool = False
    datetimes: tuple[str, ...] = ()
    limits: dict[str, int] = field(default_factory=dict)
    required: tuple[str, ...] = ()  # text fields for which null is a 400


def _item(kind: str, name: str = "detail", key: str | None = None) -> Callable[[dict], str]:
    return lambda w: reverse(f"{kind}-{name}", args=[w[key or kind].pk])


def _named(name: str) -> Callable[[dict], str]:
    return lambda w: reverse(name, kwargs={"name": w["prompt"].name})


ITEM_LIMITS = {"title": 200, "description": 1000}
STR_REPLACE = {"old_str": "Hello", "new_str": "Bye"}

ENDPOINTS = [
    Endpoint(
        "note-create",
        "post",
        lambda w: reverse("note-list"),
        {"title": "ok"},
        text=("title", "description", "content"),
        tags=True,
        datetimes=("archived_at",),
        limits=ITEM_LIMITS,
        required=("title",),
    ),
    Endpoint(
        "note-patch",
        "patch",
        _item("note"),
        {"title": "ok"},
        text=("title", "description", "content"),
        tags=True,
        datetimes=("archived_at", "expected_updated_at"),
        limits=ITEM_LIMITS,
        required=("title",),
    ),
    Endpoint(
        "bookmark-create",
        "post",
        lambda w: reverse("bookmark-list"),
        {"url": "https://new.example/"},
        text=("url", "title", "description", "content"),
        tags=True,
        datetimes=("archived_at",),
        limits={**ITEM_LIMITS, "url": 2048},
        required=("url",),
    ),
    Endpoint(
        "bookmark-patch",
        "patch",
        _item("bookmark"),
        {"title": "ok"},
        text=("url", "title", "description", "content"),
        tags=True,
        datetimes=("archived_at", "expected_updated_at"),
        limits={**ITEM_LIMITS, "url": 2048},
        required=("url",),
    ),
    Endpoint(
        "prompt-create",
        "post",
        lambda w: reverse("prompt-list"),
        {"name": "new-one", "content": "hi"},
        text=("name", "title", "description", "content"),
        tags=True,
        arguments=True,
        datetimes=("archived_at",),
        limits={**ITEM_LIMITS, "name": 100},
        required=("name", "content"),
    ),
    Endpoint(
        "prompt-patch",
        "patch",
        _item("prompt"),
        {"title": "ok"},
        text=("name", "title", "description", "content"),
        tags=True,
        arguments=True,
        datetimes=("archived_at", "expected_updated_at"),
        limits={**ITEM_LIMITS, "name": 100},
        required=("name", "content"),
    ),
    Endpoint(
        "prompt-patch-by-name",
        "patch",
        _named("prompt-by-name"),
        {"title": "ok"},
        text=("name", "title", "description", "content"),
        tags=True,
        arguments=True,
        datetimes=("expected_updated_at",),
        limits={**ITEM_LIMITS, "name": 100},
        required=("name", "content"),
    ),
    Endpoint(
        "note-str-replace",
        "patch",
        _item("note", "str-replace"),
        STR_REPLACE,
        text=("old_str", "new_str"),
        datetimes=("expected_updated_at",),
        required=("old_str", "new_str"),
    ),
    Endpoint(
        "bookmark-str-replace",
        "patch",
        _item("bookmark", "str-replace"),
        STR_REPLACE,
        text=("old_str", "new_str"),
        datetimes=("expected_updated_at",),
        required=("old_str", "new_str"),
    ),
    Endpoint(
        "prompt-str-replace",
        "patch",
        _item("prompt", "str-replace"),
        STR_REPLACE,
        text=("old_str", "new_str"),
        arguments=True,
        datetimes=("expected_updated_at",),
        required=("old_str", "new_str"),
    ),
    Endpoint(
        "prompt-str-replace-by-name",
        "patch",
        _named("prompt-str-replace-by-name"),
        STR_REPLACE,
        text=("old_str", "new_str"),
        arguments=True,
        datetimes=("expected_updated_at",),
        required=("old_str", "new_str"),
    ),
    Endpoint("prompt-render", "post", _item("prompt", "render"), {"arguments": {"who": "x"}}),
    Endpoint("note-archive", "post", _item("note", "archive"), {}),
    Endpoint("note-unarchive", "post", _item("note", "unarchive", "archived"), {}),
    Endpoint("note-restore", "post", _item("note", "restore", "deleted"), {}),
    Endpoint("note-track-usage", "post", _item("note", "track-usage"), {}),
    Endpoint("bookmark-archive", "post", _item("bookmark", "archive"), {}),
    Endpoint("prompt-archive", "post", _item("prompt", "archive"), {}),
    Endpoint("prompt-track-usage", "post", _item("prompt", "track-usage"), {}),
    Endpoint(
        "tag-rename",
        "patch",
        lambda w: reverse("tag-detail", kwargs={"name": "t"}),
        {"name": "renamed"},
        text=("name",),
        required=("name",),
    ),
    Endpoint(
        "token-create",
        "post",
        lambda w: reverse("token-list"),
        {"name": "ok"},
        session=True,
        text=("name",),
        required=("name",),
    ),
    Endpoint(
        "token-rename",
        "patch",
        lambda w: reverse("token-detail", args=[w["token"].pk]),
        {"name": "ok"},
        session=True,
        text=("name",),
        required=("name",),
    ),
]
BY_ID = {endpoint.id: endpoint for endpoint in ENDPOINTS}


def _client(endpoint: Endpoint, api: Any, session_api: Any) -> APIClient:
    return session_api if endpoint.session else api


def send(
    endpoint: Endpoint,
    world: dict[str, Any],
    client: APIClient,
    body: bytes,
    content_type: str = "application/json",
) -> Any:
    return client.generic(
        endpoint.method.upper(), endpoint.url(world), body, content_type=content_type
    )


def assert_rejected(response: Any, before: dict[str, Any]) -> None:
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    body = response.json()
    assert set(body) >= {"error", "message"}, body
    assert isinstance(body["error"], str)
    assert isinstance(body["message"], str)
    assert body["message"]
    assert state() == before


def _dump(value: Any) -> bytes:
    return json.dumps(value).encode()


# --- control: the valid body works ---------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.id for e in ENDPOINTS])
def test_the_valid_body_is_accepted(
    api: Any, session_api: Any, world: dict[str, Any], endpoint: Endpoint
) -> None:
    response = send(endpoint, world, _client(endpoint, api, session_api), _dump(endpoint.valid))
    assert response.status_code < 300, response.content[:300]


# --- whole-body problems, for every write endpoint ----------------------------------------------

RAW_BODIES = {
    "malformed": (b'{"title": ', "application/json"),
    "trailing-garbage": (b"{} x", "application/json"),
    "array": (b"[]", "application/json"),
    "array-of-objects": (b'[{"title": "x"}]', "application/json"),
    "string": (b'"text"', "application/json"),
    "number": (b"42", "application/json"),
    "huge-number": (str(10**40).encode(), "application/json"),
    "null": (b"null", "application/json"),
    "true": (b"true", "application/json"),
    "nan": (b'{"title": NaN}', "application/json"),
    "deeply-nested-array": (b"[" * 100_000 + b"]" * 100_000, "application/json"),
    "deeply-nested-object": (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "application/json"),
    "invalid-utf8": (b'{"title": "\xff\xfe"}', "application/json"),
    "text-plain": (b'{"title": "x"}', "text/plain"),
    "form": (b"title=x", "application/x-www-form-urlencoded"),
    "multipart": (b"--b\r\n\r\n--b--", "multipart/form-data; boundary=b"),
    "xml": (b"<title>x</title>", "application/xml"),
}


@pytest.mark.parametrize("case", list(RAW_BODIES))
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.id for e in ENDPOINTS])
def test_a_body_that_is_not_a_json_object_is_rejected(
    api: Any, session_api: Any, world: dict[str, Any], endpoint: Endpoint, case: str
) -> None:
    raw, content_type = RAW_BODIES[case]
    before = state()
    client = _client(endpoint, api, session_api)
    assert_rejected(send(endpoint, world, client, raw, content_type), before)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.id for e in ENDPOINTS])
def test_an_unknown_field_is_rejected_naming_it(
    api: Any, session_api: Any, world: dict[str, Any], endpoint: Endpoint
) -> None:
    before = state()
    body = _dump({**endpoint.valid, "bogus_field": 1})
    response = send(endpoint, world, _client(endpoint, api, session_api), body)
    assert_rejected(response, before)
    assert "bogus_field" in response.json()["message"]


def test_malformed_json_message_tells_how_to_fix_it(api: Any, world: dict[str, Any]) -> None:
    response = send(BY_ID["note-create"], world, api, b"{")
    body = response.json()
    assert body["error"] == "validation_error"
    assert "JSON" in body["message"]


def test_non_json_content_type_is_415(api: Any, world: dict[str, Any]) -> None:
    response = send(BY_ID["note-create"], world, api, b"title=x", "text/plain")
    assert response.status_code == 415
    assert response.json()["error"] == "unsupported_media_type"


# --- per-field problems -------------------------------------------------------------------------

WRONG_FOR_TEXT = {
    "int": 42,
    "huge-int": 10**40,
    "float": 1e30,
    "bool": True,
    "list": ["a"],
    "dict": {"a": 1},
    "nul": "a\x00b",
}
WRONG_FOR_TAGS = {
    "string": "a",
    "dict": {"a": 1},
    "int": 7,
    "null": None,
    "list-of-ints": [1],
    "list-of-lists": [["a"]],
    "list-of-dicts": [{"a": 1}],
    "list-with-null": [None],
    "nul": ["a\x00"],
    "invalid-name": ["no spaces"],
    "too-long": ["a" * 51],
}
WRONG_FOR_ARGUMENTS = {
    "string": "who",
    "dict": {"name": "who"},
    "list-of-strings": ["who"],
    "name-int": [{"name": 1}],
    "name-missing": [{"description": "x"}],
    "name-nul": [{"name": "who\x00"}],
    "description-nul": [{"name": "who", "description": "\x00"}],
    "description-int": [{"name": "who", "description": 5}],
    "required-not-bool": [{"name": "who", "required": "maybe"}],
    "unknown-key": [{"name": "who", "extra": 1}],
    "duplicate": [{"name": "who"}, {"name": "who"}],
}
WRONG_FOR_DATETIME = {
    "word": "yesterday",
    "int": 42,
    "huge-int": 10**40,
    "impossible-date": "2024-02-30T00:00:00Z",
    "out-of-range": "0001-01-01T00:00:00+14:00",
    "nul": "2024-01-01\x00",
    "list": ["2024-01-01T00:00:00Z"],
}


def _field_cases() -> list[tuple[str, str, Any]]:
    cases: list[tuple[str, str, Any]] = []
    for endpoint in ENDPOINTS:
        for name in endpoint.text:
            cases += [(endpoint.id, name, value) for value in WRONG_FOR_TEXT.values()]
            if name in endpoint.required:
                cases.append((endpoint.id, name, None))
        if endpoint.tags:
            cases += [(endpoint.id, "tags", value) for value in WRONG_FOR_TAGS.values()]
        if endpoint.arguments:
            cases += [(endpoint.id, "arguments", value) for value in WRONG_FOR_ARGUMENTS.values()]
        for name in endpoint.datetimes:
            cases += [(endpoint.id, name, value) for value in WRONG_FOR_DATETIME.values()]
        for name, limit in endpoint.limits.items():
            value = "https://e.example/" + "a" * limit if name == "url" else "a" * (limit + 1)
            cases.append((endpoint.id, name, value))
    return cases


FIELD_CASES = _field_cases()


@pytest.mark.parametrize(
    ("endpoint_id", "name", "value"),
    FIELD_CASES,
    ids=[f"{e}-{n}-{json.dumps(v)[:24]}" for e, n, v in FIELD_CASES],
)
def test_a_bad_field_value_is_rejected(
    api: Any,
    session_api: Any,
    world: dict[str, Any],
    endpoint_id: str,
    name: str,
    value: Any,
) -> None:
    endpoint = BY_ID[endpoint_id]
    before = state()
    body = _dump({**endpoint.valid, name: value})
    assert_rejected(send(endpoint, world, _client(endpoint, api, session_api), body), before)


@pytest.mark.parametrize("value", ["who", ["who"], 1, None])
def test_render_arguments_must_be_an_object(api: Any, world: dict[str, Any], value: Any) -> None:
    before = state()
    response = send(BY_ID["prompt-render"], world, api, _dump({"arguments": value}))
    assert_rejected(response, before)


def test_render_values_may_contain_nul_since_nothing_is_stored(
    api: Any, world: dict[str, Any]
) -> None:
    response = send(BY_ID["prompt-render"], world, api, _dump({"arguments": {"who": "a\x00b"}}))
    assert response.json() == {"rendered": "Hello a\x00b!"}


@pytest.mark.parametrize("value", [10**40, 1e30, "soon", -1, 0, 3651, [1], "\x00"])
def test_token_expiry_must_be_a_sensible_number_of_days(
    session_api: Any, world: dict[str, Any], value: Any
) -> None:
    before = state()
    body = _dump({"name": "ok", "expires_in_days": value})
    assert_rejected(send(BY_ID["token-create"], world, session_api, body), before)


def test_content_over_the_limit_is_rejected_on_every_content_write(
    api: Any, world: dict[str, Any], settings: Any
) -> None:
    settings.TIDDLY_LIMITS = {**settings.TIDDLY_LIMITS, "content": 30}
    before = state()
    for endpoint_id in ("note-create", "note-patch", "bookmark-patch", "prompt-patch"):
        endpoint = BY_ID[endpoint_id]
        body = _dump({**endpoint.valid, "content": "a" * 31})
        response = send(endpoint, world, api, body)
        assert_rejected(response, before)
        assert response.json()["error"] == "field_limit_exceeded"
    response = send(
        BY_ID["note-str-replace"], world, api, _dump({"old_str": "Hello", "new_str": "a" * 40})
    )
    assert_rejected(response, before)
    assert response.json()["error"] == "field_limit_exceeded"


def test_a_body_over_the_upload_limit_is_rejected(
    api: Any, world: dict[str, Any], settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2_000
    before = state()
    body = _dump({"title": "t", "content": "x" * 5_000})
    response = send(BY_ID["note-create"], world, api, body)
    assert_rejected(response, before)
    assert response.json()["error"] == "field_limit_exceeded"


# --- query parameters ---------------------------------------------------------------------------

LIST_PARAMS = [
    {"limit": "1e30"},
    {"limit": str(10**40)},
    {"limit": "-1"},
    {"limit": "0"},
    {"limit": "101"},
    {"limit": "ten"},
    {"limit": "\x00"},
    {"offset": "1e30"},
    {"offset": str(10**40)},
    {"offset": "-1"},
    {"offset": "0.5"},
    {"q": "a\x00b"},
    {"tags": "a\x00"},
    {"tags": "not a tag"},
    {"tag_match": "\x00"},
    {"view": "\x00"},
    {"view": "everything"},
    {"sort_by": "\x00"},
    {"sort_by": "content"},
    {"sort_order": "sideways"},
]
LISTS = ["note-list", "bookmark-list", "prompt-list", "content-list"]


@pytest.mark.parametrize("params", LIST_PARAMS, ids=[urlencode(p)[:30] for p in LIST_PARAMS])
@pytest.mark.parametrize("url_name", LISTS)
def test_bad_list_parameters_are_400(
    api: Any, world: dict[str, Any], url_name: str, params: dict[str, str]
) -> None:
    before = state()
    assert_rejected(api.get(reverse(url_name), params), before)


@pytest.mark.parametrize("value", ["tweet", "\x00", ""])
def test_bad_content_type_filter_is_400(api: Any, world: dict[str, Any], value: str) -> None:
    assert_rejected(api.get(reverse("content-list"), {"type": value}), state())


@pytest.mark.parametrize("value", ["maybe", "\x00", "2"])
def test_bad_include_inactive_is_400(api: Any, world: dict[str, Any], value: str) -> None:
    assert_rejected(api.get(reverse("tag-list"), {"include_inactive": value}), state())


LINE_PARAMS = [
    {"start_line": "1e30"},
    {"start_line": str(10**40)},
    {"end_line": str(10**40)},
    {"start_line": "0"},
    {"end_line": "-1"},
    {"start_line": "two"},
    {"start_line": "\x00"},
    {"start_line": "3", "end_line": "2"},
    {"start_line": "99"},
]


@pytest.mark.parametrize("params", LINE_PARAMS, ids=[urlencode(p)[:30] for p in LINE_PARAMS])
@pytest.mark.parametrize("kind", ["note", "bookmark", "prompt"])
def test_bad_line_range_parameters_are_400(
    api: Any, world: dict[str, Any], kind: str, params: dict[str, str]
) -> None:
    assert_rejected(api.get(reverse(f"{kind}-detail", args=[world[kind].pk]), params), state())


def test_huge_end_line_is_clamped_not_an_error(api: Any, world: dict[str, Any]) -> None:
    url = reverse("note-detail", args=[world["note"].pk])
    response = api.get(url, {"end_line": str(2**31)})
    assert response.status_code == 200
    assert response.json()["content"] == "Hello world"


SEARCH_PARAMS = [
    {},
    {"q": ""},
    {"q": "a\x00"},
    {"q": "a", "context_lines": "1e30"},
    {"q": "a", "context_lines": str(10**40)},
    {"q": "a", "context_lines": "11"},
    {"q": "a", "context_lines": "-1"},
    {"q": "a", "fields": "\x00"},
    {"q": "a", "fields": "url"},
    {"q": "a", "case_sensitive": "perhaps"},
]


@pytest.mark.parametrize("params", SEARCH_PARAMS, ids=[urlencode(p)[:30] for p in SEARCH_PARAMS])
def test_bad_within_item_search_parameters_are_400(
    api: Any, world: dict[str, Any], params: dict[str, str]
) -> None:
    url = reverse("note-search", args=[world["note"].pk])
    assert_rejected(api.get(url, params), state())


@pytest.mark.parametrize(
    ("endpoint_id", "query"),
    [
        ("note-str-replace", "include_updated_entity=perhaps"),
        ("note-str-replace", "include_updated_entity=%00"),
        ("note-patch", "start_line=abc"),
    ],
)
def test_bad_query_parameters_on_writes_are_400_and_write_nothing(
    api: Any, world: dict[str, Any], endpoint_id: str, query: str
) -> None:
    endpoint = BY_ID[endpoint_id]
    before = state()
    url = endpoint.url(world) + "?" + query
    response = api.generic(
        endpoint.method.upper(), url, _dump(endpoint.valid), content_type="application/json"
    )
    if endpoint_id == "note-patch":
        # Partial-read parameters only apply to GET; a PATCH ignores them.
        assert response.status_code == 200
    else:
        assert_rejected(response, before)


@pytest.mark.parametrize("value", ["maybe", "%00"])
def test_bad_permanent_flag_is_400(api: Any, world: dict[str, Any], value: str) -> None:
    url = reverse("note-detail", args=[world["note"].pk]) + "?permanent=" + value
    assert_rejected(api.delete(url), state())


# --- paths --------------------------------------------------------------------------------------

BAD_IDS = ["not-a-uuid", "1", "0190b8a4-0000-7000-8000-00000000000", "%00", "x" * 300, "%E2%82%AC"]
ITEM_ACTIONS = [
    ("get", "detail"),
    ("patch", "detail"),
    ("delete", "detail"),
    ("post", "archive"),
    ("post", "unarchive"),
    ("post", "restore"),
    ("post", "track-usage"),
    ("get", "search"),
    ("patch", "str-replace"),
]


@pytest.mark.parametrize("bad_id", BAD_IDS)
@pytest.mark.parametrize(("method", "action"), ITEM_ACTIONS)
@pytest.mark.parametrize("kind", ["note", "bookmark", "prompt"])
def test_a_malformed_id_in_the_path_is_404(
    api: Any, world: dict[str, Any], kind: str, method: str, action: str, bad_id: str
) -> None:
    before = state()
    prefix = {"note": "notes", "bookmark": "bookmarks", "prompt": "prompts"}[kind]
    suffix = "" if action == "detail" else f"{action}/"
    url = f"/api/{prefix}/{bad_id}/{suffix}"
    if method == "patch":
        body = STR_REPLACE if action == "str-replace" else {"title": "x"}
        response = api.patch(url, body, format="json")
    else:
        response = getattr(api, method)(url + ("?q=x" if action == "search" else ""))
    assert response.status_code == 404, response.content[:200]
    assert response.json()["error"] == "not_found"
    assert state() == before


@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_a_malformed_id_for_render_is_404(api: Any, world: dict[str, Any], bad_id: str) -> None:
    response = api.post(f"/api/prompts/{bad_id}/render/", {"arguments": {}}, format="json")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


@pytest.mark.parametrize("name", ["a%00b", "%00", "x" * 300, "%E2%82%AC", "UPPER"])
@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/prompts/name/{}/"),
        ("patch", "/api/prompts/name/{}/"),
        ("patch", "/api/prompts/name/{}/str-replace/"),
        ("patch", "/api/tags/{}/"),
        ("delete", "/api/tags/{}/"),
    ],
)
def test_a_malformed_name_in_the_path_is_404(
    api: Any, world: dict[str, Any], method: str, url: str, name: str
) -> None:
    before = state()
    body = STR_REPLACE if "str-replace" in url else {"name": "valid-name"}
    response = getattr(api, method)(url.format(name), body, format="json")
    assert response.status_code == 404, response.content[:200]
    assert response.json()["error"] == "not_found"
    assert state() == before


# --- methods and unknown paths ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("put", "/api/notes/{note}/"),
        ("post", "/api/notes/{note}/"),
        ("delete", "/api/notes/"),
        ("put", "/api/tags/t/"),
        ("get", "/api/notes/{note}/archive/"),
        ("get", "/api/notes/{note}/str-replace/"),
        ("post", "/api/content/"),
        ("put", "/api/prompts/name/greet/"),
    ],
)
def test_an_unsupported_method_is_405_with_the_envelope(
    api: Any, world: dict[str, Any], method: str, url: str
) -> None:
    before = state()
    response = getattr(api, method)(
        url.format(note=world["note"].pk), {"title": "x"}, format="json"
    )
    assert response.status_code == 405
    body = response.json()
    assert body["error"] == "method_not_allowed"
    assert method.upper() in body["message"]
    assert state() == before


@pytest.mark.parametrize("url", ["/api/nope/", "/api/notes/a/b/c/", "/api/nope", "/api/v2/notes/"])
def test_an_unknown_api_path_is_a_json_404(api: Any, url: str) -> None:
    response = api.get(url)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["error"] == "not_found"
    assert "/api/docs/" in body["message"]


def test_an_unknown_page_outside_the_api_is_an_html_404(client: Any) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_an_unacceptable_accept_header_is_406_with_the_envelope(api: Any) -> None:
    response = api.get(reverse("note-list"), HTTP_ACCEPT="application/xml")
    assert response.status_code == 406
    assert response.json()["error"] == "not_acceptable"


@pytest.mark.parametrize(
    "url_name",
    ["note-list", "bookmark-list", "prompt-list", "content-list", "tag-list", "token-list"],
)
def test_the_browsable_api_renders_for_a_signed_in_person(
    session_api: Any, world: dict[str, Any], url_name: str
) -> None:
    response = session_api.get(reverse(url_name), HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("kind", ["note", "bookmark", "prompt"])
def test_the_browsable_api_renders_an_item(
    session_api: Any, world: dict[str, Any], kind: str
) -> None:
    response = session_api.get(
        reverse(f"{kind}-detail", args=[world[kind].pk]), HTTP_ACCEPT="text/html"
    )
    assert response.status_code == 200


@pytest.mark.parametrize("field", ["title", "content", "description"])
def test_a_lone_surrogate_in_a_text_field_is_400_and_saves_nothing(
    api: Any, owner: Any, field: str
) -> None:
    from content.models import Note

    body = json.dumps({"title": "ok", field: "caf\u00e9 \ud800 end"})  # JSON escapes it
    response = api.post("/api/notes/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert "U+D800" in str(response.json()["fields"][field])
    assert not Note.objects.filter(owner=owner).exists()


def test_non_ascii_text_without_surrogates_is_accepted(api: Any) -> None:
    response = api.post(
        "/api/notes/", {"title": "Ärger", "content": "école 🙂 straße"}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["content"] == "école 🙂 straße"


@pytest.mark.parametrize("value", ["maybe", "null"])
def test_a_bad_permanent_flag_is_a_validation_error_naming_it_and_deletes_nothing(
    api: Any, owner: Any, value: str
) -> None:
    note = NoteFactory(owner=owner)

    response = api.delete(f"/api/notes/{note.pk}/?permanent={value}")

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert list(response.json()["fields"]) == ["permanent"]
    note.refresh_from_db()
    assert note.deleted_at is None


def test_a_bad_include_inactive_flag_is_a_validation_error_naming_it(api: Any) -> None:
    response = api.get("/api/tags/?include_inactive=perhaps")

    assert response.status_code == 400
    assert list(response.json()["fields"]) == ["include_inactive"]
