"""Within-item search: GET /api/{type}/{id}/search/ (SPEC §4.2)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from content.tests.editing_support import NULLABLE_TYPES, TYPES, make_item, row_state, url

pytestmark = pytest.mark.django_db

TEN_LINES = "\n".join(f"line {n}" for n in range(1, 11))


@pytest.fixture(params=TYPES)
def kind(request: Any) -> str:
    return request.param


def search(client: Any, item: Any, **params: Any) -> Any:
    return client.get(url(item.type_name, "search", item.pk), params)


def match(line: int | None, context: str, field: str = "content") -> dict[str, Any]:
    return {"field": field, "line": line, "context": context}


def found(*matches: dict[str, Any]) -> dict[str, Any]:
    return {"matches": list(matches), "total_matches": len(matches)}


def test_search_finds_literal_text_with_default_two_lines_of_context(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(owner, kind, content=TEN_LINES.replace("line 5", "line 5 needle"))
    before = row_state(item)

    response = search(api, item, q="needle")

    assert response.status_code == 200
    assert response.json() == found(match(5, "line 3\nline 4\nline 5 needle\nline 6\nline 7"))
    assert row_state(item) == before


def test_search_treats_regex_characters_literally(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content="abc\nx.*(y\nxanything(y\n[a-z]+ $1 \\d")

    dots = search(api, item, q=".*(", context_lines=0)
    brackets = search(api, item, q="[a-z]+ $1 \\d", context_lines=0)

    assert dots.status_code == 200
    assert dots.json() == found(match(2, "x.*(y"))
    assert brackets.status_code == 200
    assert brackets.json() == found(match(4, "[a-z]+ $1 \\d"))


def test_search_is_case_insensitive_by_default_and_finds_every_match_on_a_line(
    api: Any, owner: Any
) -> None:
    item = make_item(owner, "note", content="intro\nFoo foo FOO\nend")

    response = search(api, item, q="foo", context_lines=0)

    assert response.status_code == 200
    assert response.json() == found(
        match(2, "Foo foo FOO"), match(2, "Foo foo FOO"), match(2, "Foo foo FOO")
    )


def test_search_with_case_sensitive_true_matches_exact_case_only(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="intro\nFoo foo FOO\nend\nfoo")

    response = search(api, item, q="foo", case_sensitive="true", context_lines=0)

    assert response.status_code == 200
    assert response.json() == found(match(2, "Foo foo FOO"), match(4, "foo"))


def test_search_counts_non_overlapping_occurrences_left_to_right(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="aaaaa\nb\naa")

    response = search(api, item, q="aa", context_lines=0)

    assert response.status_code == 200
    assert response.json() == found(match(1, "aaaaa"), match(1, "aaaaa"), match(3, "aa"))


@pytest.mark.parametrize(
    ("context_lines", "context"),
    [
        (0, "line 5"),
        (1, "line 4\nline 5\nline 6"),
        (4, "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9"),
        (10, TEN_LINES),
    ],
)
def test_search_context_lines_are_clipped_to_the_document(
    api: Any, owner: Any, context_lines: int, context: str
) -> None:
    item = make_item(owner, "note", content=TEN_LINES)

    response = search(api, item, q="line 5", context_lines=context_lines)

    assert response.status_code == 200
    assert response.json() == found(match(5, context))


def test_search_near_the_start_and_end_clips_context(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content=TEN_LINES)

    first = search(api, item, q="line 1\n")
    last = search(api, item, q="line 10")

    assert first.json() == found(match(1, "line 1\nline 2\nline 3\nline 4"))
    assert last.json() == found(match(10, "line 8\nline 9\nline 10"))


def test_search_with_a_multi_line_query_reports_its_first_line_and_context_after_its_last(
    api: Any, owner: Any
) -> None:
    item = make_item(owner, "note", content=TEN_LINES)

    response = search(api, item, q="5\nline 6\nline", context_lines=1)

    assert response.status_code == 200
    assert response.json() == found(match(5, "line 4\nline 5\nline 6\nline 7\nline 8"))


def test_search_without_a_match_is_200_with_an_empty_list(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content=TEN_LINES)

    response = search(api, item, q="absent")

    assert response.status_code == 200
    assert response.json() == {"matches": [], "total_matches": 0}


@pytest.mark.parametrize("kind", NULLABLE_TYPES)
def test_search_of_null_content_finds_nothing(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content=None)

    response = search(api, item, q="anything")

    assert response.status_code == 200
    assert response.json() == {"matches": [], "total_matches": 0}


def test_search_in_title_and_description_gives_one_match_per_field_with_the_whole_field(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(
        owner,
        kind,
        title="Plan: plan the PLAN",
        description="A plan\nover two lines",
        content="no match here",
    )

    response = search(api, item, q="plan", fields="title,description,content")

    assert response.status_code == 200
    assert response.json() == found(
        match(None, "Plan: plan the PLAN", "title"),
        match(None, "A plan\nover two lines", "description"),
    )


def test_search_of_fields_follows_the_requested_order_and_ignores_duplicates(
    api: Any, owner: Any
) -> None:
    item = make_item(owner, "note", title="word", description=None, content="a\nword")

    response = search(api, item, q="word", fields=" content , TITLE,description,content")

    assert response.status_code == 200
    assert response.json() == found(match(2, "a\nword"), match(None, "word", "title"))


def test_search_defaults_to_content_only(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", title="word", description="word", content="nothing")

    response = search(api, item, q="word")

    assert response.status_code == 200
    assert response.json() == {"matches": [], "total_matches": 0}


@pytest.mark.parametrize(
    ("fields", "named"),
    [("content,url", "url"), ("body", "body"), ("name,tags", "name, tags"), (",", "(none)")],
)
def test_search_with_an_unknown_field_is_400_naming_the_valid_ones(
    api: Any, owner: Any, fields: str, named: str
) -> None:
    item = make_item(owner, "note", content="x")

    response = search(api, item, q="x", fields=fields)

    assert response.status_code == 400
    message = f"Invalid fields: {named}. Valid fields: content, title, description."
    assert response.json() == {
        "error": "validation_error",
        "message": f"Invalid request. Fix these fields and retry. fields: {message}",
        "fields": {"fields": [message]},
    }


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"q": "x", "context_lines": 11}, "context_lines"),
        ({"q": "x", "context_lines": -1}, "context_lines"),
        ({"q": "x", "context_lines": "two"}, "context_lines"),
        ({"q": "x", "case_sensitive": "maybe"}, "case_sensitive"),
        ({"q": ""}, "q"),
        ({}, "q"),
    ],
    ids=["context-11", "context-negative", "context-text", "case-bad", "q-empty", "q-missing"],
)
def test_search_with_invalid_parameters_is_a_validation_error(
    api: Any, owner: Any, params: dict[str, Any], field: str
) -> None:
    item = make_item(owner, "note", content="x")

    response = search(api, item, **params)

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "validation_error"
    assert list(body["fields"]) == [field]
    assert body["message"].startswith(f"Invalid request. Fix these fields and retry. {field}: ")


@pytest.mark.parametrize("state", ["archived_at", "deleted_at"])
def test_search_works_on_archived_and_deleted_items(
    api: Any, owner: Any, kind: str, state: str
) -> None:
    item = make_item(owner, kind, content="alpha\nbeta")
    type(item).objects.filter(pk=item.pk).update(**{state: timezone.now()})

    response = search(api, item, q="beta")

    assert response.status_code == 200
    assert response.json() == found(match(2, "alpha\nbeta"))


def test_search_in_a_strangers_item_is_404(other_api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content="secret words")

    response = search(other_api, item, q="secret")

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert "secret words" not in response.content.decode()


def test_search_of_an_unknown_or_malformed_id_is_404(api: Any) -> None:
    unknown = api.get(
        reverse("note-search", args=["0190aaaa-0000-7000-8000-000000000000"]), {"q": "x"}
    )
    malformed = api.get(reverse("note-search", args=["not-a-uuid"]), {"q": "x"})

    assert unknown.status_code == 404
    assert malformed.status_code == 404
    assert malformed.json()["error"] == "not_found"


def test_search_anonymously_is_401(anon: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="x")

    response = search(anon, item, q="x")

    assert response.status_code == 401
    assert response.json()["error"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Bearer resource_metadata=")


def test_search_openapi_description_states_the_use_cases(api: Any) -> None:
    response = api.get(reverse("schema"), {"format": "json"})

    assert response.status_code == 200
    paths = response.json()["paths"]
    for kind in ("bookmarks", "notes", "prompts"):
        operation = paths[f"/api/{kind}/{{id}}/search/"]["get"]
        description = operation["description"]
        assert "how many times text occurs before an edit" in description
        assert "build a unique `old_str`" in description
        assert "without reading all of it" in description
        assert "200 with an empty list" in description
        params = {p["name"]: p for p in operation["parameters"]}
        assert params["q"]["required"] is True
        assert params["context_lines"]["schema"] == {
            "type": "integer",
            "maximum": 10,
            "minimum": 0,
            "default": 2,
        }
