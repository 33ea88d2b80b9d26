"""Partial read: GET /api/{type}/{id}/ and GET /api/prompts/name/{name}/ with line ranges (SPEC §4.1)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from content.models import Note
from content.tests.editing_support import (
    NULLABLE_TYPES,
    TYPES,
    by_name_url,
    expected_item,
    make_item,
    row_state,
    url,
)
from content.tests.helpers import item_body

pytestmark = pytest.mark.django_db

FIVE_LINES = "one\ntwo\nthree\nfour\nfive"
LONG_TITLE = "T" * 200
LONG_DESCRIPTION = "d" * 1000


@pytest.fixture(params=TYPES)
def kind(request: Any) -> str:
    return request.param


@pytest.fixture
def item(owner: Any, kind: str) -> Any:
    return make_item(
        owner,
        kind,
        title=LONG_TITLE,
        description=LONG_DESCRIPTION,
        content=FIVE_LINES,
        tags=["beta", "alpha"],
    )


def metadata(total: int, start: int, end: int, partial: bool) -> dict[str, Any]:
    return {"total_lines": total, "start_line": start, "end_line": end, "is_partial": partial}


def range_error(message: str) -> dict[str, Any]:
    return {"error": "invalid_line_range", "message": message}


# --- full reads ---------------------------------------------------------------------------------


def test_get_without_line_parameters_returns_everything_with_metadata_not_partial(
    api: Any, item: Any
) -> None:
    before = row_state(item)

    response = api.get(url(item.type_name, "detail", item.pk), format="json")

    assert response.status_code == 200
    assert item_body(response) == expected_item(
        item, content=FIVE_LINES, content_length=23, content_metadata=metadata(5, 1, 5, False)
    )
    assert response.json()["title"] == LONG_TITLE
    assert response.json()["tags"] == ["alpha", "beta"]
    assert response["ETag"]
    assert row_state(item) == before


@pytest.mark.parametrize("kind", NULLABLE_TYPES)
def test_get_of_null_content_has_null_metadata_and_length(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content=None)

    response = api.get(url(kind, "detail", item.pk), format="json")

    assert response.status_code == 200
    body = item_body(response)
    assert body == expected_item(item)
    assert body["content"] is None
    assert body["content_metadata"] is None
    assert body["content_length"] is None


@pytest.mark.parametrize("kind", NULLABLE_TYPES)
def test_get_of_empty_string_content_counts_one_line(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content="")

    response = api.get(url(kind, "detail", item.pk), format="json")

    assert response.status_code == 200
    assert item_body(response) == expected_item(
        item, content="", content_length=0, content_metadata=metadata(1, 1, 1, False)
    )


@pytest.mark.parametrize(
    ("content", "total"),
    [("a", 1), ("a\n", 2), ("a\nb\n", 3), ("a\r\nb", 2), ("\n\n", 3)],
)
def test_total_lines_counts_like_an_editor(api: Any, owner: Any, content: str, total: int) -> None:
    item = make_item(owner, "note", content=content)

    response = api.get(url("note", "detail", item.pk), format="json")

    assert response.status_code == 200
    assert response.json()["content_metadata"] == metadata(total, 1, total, False)


# --- partial reads ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "content", "meta"),
    [
        ({"start_line": 2, "end_line": 3}, "two\nthree", metadata(5, 2, 3, True)),
        ({"start_line": 4}, "four\nfive", metadata(5, 4, 5, True)),
        ({"end_line": 2}, "one\ntwo", metadata(5, 1, 2, True)),
        ({"start_line": 3, "end_line": 3}, "three", metadata(5, 3, 3, True)),
        ({"start_line": 5, "end_line": 5}, "five", metadata(5, 5, 5, True)),
        ({"start_line": 1, "end_line": 5}, FIVE_LINES, metadata(5, 1, 5, True)),
        ({"start_line": 4, "end_line": 99}, "four\nfive", metadata(5, 4, 5, True)),
        ({"end_line": 2**31}, FIVE_LINES, metadata(5, 1, 5, True)),
    ],
    ids=["both", "start-only", "end-only", "one-line", "last-line", "all", "clamped", "huge-end"],
)
def test_partial_read_cuts_only_content_and_reports_the_window(
    api: Any, item: Any, query: dict[str, int], content: str, meta: dict[str, Any]
) -> None:
    response = api.get(url(item.type_name, "detail", item.pk), query)

    assert response.status_code == 200
    # Everything but content is in full; content_length is the full length, not the window's.
    assert item_body(response) == expected_item(
        item, content=content, content_length=len(FIVE_LINES), content_metadata=meta
    )


def test_partial_read_keeps_carriage_returns_and_a_trailing_empty_line(
    api: Any, owner: Any
) -> None:
    item = make_item(owner, "note", content="a\r\nb\r\nc\n")

    middle = api.get(url("note", "detail", item.pk), {"start_line": 2, "end_line": 3})
    last = api.get(url("note", "detail", item.pk), {"start_line": 4})

    assert middle.status_code == 200
    assert middle.json()["content"] == "b\r\nc"
    assert middle.json()["content_metadata"] == metadata(4, 2, 3, True)
    assert last.status_code == 200
    assert last.json()["content"] == ""
    assert last.json()["content_metadata"] == metadata(4, 4, 4, True)


@pytest.mark.parametrize("kind", NULLABLE_TYPES)
def test_partial_read_of_empty_string_content_has_one_empty_line(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(owner, kind, content="")

    response = api.get(url(kind, "detail", item.pk), {"start_line": 1, "end_line": 3})

    assert response.status_code == 200
    assert item_body(response) == expected_item(
        item, content="", content_length=0, content_metadata=metadata(1, 1, 1, True)
    )


@pytest.mark.parametrize("state", ["archived", "deleted"])
def test_partial_read_works_on_archived_and_deleted_items(api: Any, owner: Any, state: str) -> None:
    now = timezone.now()
    item = make_item(owner, "note", content=FIVE_LINES)
    type(item).objects.filter(pk=item.pk).update(
        **({"archived_at": now} if state == "archived" else {"deleted_at": now})
    )

    response = api.get(url("note", "detail", item.pk), {"start_line": 5})

    assert response.status_code == 200
    assert item_body(response) == expected_item(
        item, content="five", content_length=23, content_metadata=metadata(5, 5, 5, True)
    )
    assert response.json()["state"] == state


# --- invalid ranges -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"start_line": 6}, "start_line (6) exceeds total lines (5)"),
        ({"start_line": 6, "end_line": 9}, "start_line (6) exceeds total lines (5)"),
        ({"start_line": 3, "end_line": 2}, "start_line (3) must be <= end_line (2)"),
        ({"start_line": 0}, "start_line must be >= 1"),
        ({"start_line": -4, "end_line": 2}, "start_line must be >= 1"),
        ({"end_line": 0}, "end_line must be >= 1"),
        ({"start_line": 2, "end_line": -1}, "end_line must be >= 1"),
    ],
    ids=[
        "past-end",
        "past-end-with-end",
        "start-after-end",
        "zero",
        "negative",
        "end-zero",
        "end-neg",
    ],
)
def test_invalid_line_range_is_400_with_its_message(
    api: Any, item: Any, query: dict[str, int], message: str
) -> None:
    before = row_state(item)

    response = api.get(url(item.type_name, "detail", item.pk), query)

    assert response.status_code == 400
    assert response.json() == range_error(message)
    assert row_state(item) == before


@pytest.mark.parametrize("kind", NULLABLE_TYPES)
def test_start_past_the_single_line_of_empty_content_names_the_total(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(owner, kind, content="")

    response = api.get(url(kind, "detail", item.pk), {"start_line": 2})

    assert response.status_code == 400
    assert response.json() == range_error("start_line (2) exceeds total lines (1)")


@pytest.mark.parametrize("kind", NULLABLE_TYPES)
@pytest.mark.parametrize(
    "query", [{"start_line": 1}, {"end_line": 1}, {"start_line": 1, "end_line": 1}]
)
def test_any_line_parameter_on_null_content_is_400(
    api: Any, owner: Any, kind: str, query: dict[str, int]
) -> None:
    item = make_item(owner, kind, content=None)

    response = api.get(url(kind, "detail", item.pk), query)

    assert response.status_code == 400
    assert response.json() == range_error("Content is empty; cannot retrieve lines")


@pytest.mark.parametrize(
    "query", [{"start_line": "two"}, {"end_line": "1.5"}, {"start_line": str(2**31 + 1)}]
)
def test_non_integer_or_huge_line_parameter_is_a_validation_error(
    api: Any, item: Any, query: dict[str, str]
) -> None:
    response = api.get(url(item.type_name, "detail", item.pk), query)

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "validation_error"
    assert list(body["fields"]) == list(query)
    assert body["message"].startswith("Invalid request.")


@pytest.mark.parametrize("query", ["?start_line=9", "?start_line=abc", "?end_line=0"])
def test_line_parameters_on_writes_are_ignored_so_a_saved_write_never_answers_400(
    api: Any, owner: Any, query: str
) -> None:
    created = api.post(
        reverse("note-list") + query, {"title": "New", "content": "a\nb"}, format="json"
    )
    note = Note.objects.get()
    patched = api.patch(
        url("note", "detail", note.pk) + query, {"content": "c\nd\ne"}, format="json"
    )
    archived = api.post(reverse("note-archive", args=[note.pk]) + query, format="json")

    assert created.status_code == 201
    assert created.json()["content"] == "a\nb"
    assert created.json()["content_metadata"] == metadata(2, 1, 2, False)
    assert patched.status_code == 200
    assert patched.json()["content_metadata"] == metadata(3, 1, 3, False)
    assert archived.status_code == 200
    assert item_body(archived) == expected_item(note)
    assert Note.objects.get().content == "c\nd\ne"


def test_line_parameters_on_a_prompt_update_by_name_are_ignored(api: Any, owner: Any) -> None:
    prompt = make_item(owner, "prompt", name="review", content=FIVE_LINES)

    response = api.patch(by_name_url("review") + "?start_line=99", {"title": "T"}, format="json")

    assert response.status_code == 200
    assert item_body(response) == expected_item(prompt)
    assert response.json()["title"] == "T"


# --- prompts by name ----------------------------------------------------------------------------


def test_prompt_by_name_supports_partial_read(api: Any, owner: Any) -> None:
    prompt = make_item(owner, "prompt", name="review", content=FIVE_LINES, title="Review")

    full = api.get(by_name_url("review"))
    partial = api.get(by_name_url("review"), {"start_line": 2, "end_line": 4})

    assert full.status_code == 200
    assert item_body(full) == expected_item(prompt)
    assert full.json()["content_metadata"] == metadata(5, 1, 5, False)
    assert partial.status_code == 200
    assert item_body(partial) == expected_item(
        prompt, content="two\nthree\nfour", content_metadata=metadata(5, 2, 4, True)
    )


def test_prompt_by_name_with_invalid_range_is_400(api: Any, owner: Any) -> None:
    make_item(owner, "prompt", name="review", content=FIVE_LINES)

    response = api.get(by_name_url("review"), {"start_line": 9})

    assert response.status_code == 400
    assert response.json() == range_error("start_line (9) exceeds total lines (5)")


@pytest.mark.parametrize("state", ["archived_at", "deleted_at"])
def test_prompt_by_name_of_an_inactive_prompt_is_404(api: Any, owner: Any, state: str) -> None:
    prompt = make_item(owner, "prompt", name="review", content=FIVE_LINES)
    type(prompt).objects.filter(pk=prompt.pk).update(**{state: timezone.now()})

    response = api.get(by_name_url("review"), {"start_line": 1})

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert "review" in response.json()["message"]


# --- access -------------------------------------------------------------------------------------


def test_partial_read_of_a_strangers_item_is_404(other_api: Any, item: Any) -> None:
    response = other_api.get(url(item.type_name, "detail", item.pk), {"start_line": 1})

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert FIVE_LINES not in response.content.decode()


def test_partial_read_by_name_of_a_strangers_prompt_is_404(other_api: Any, owner: Any) -> None:
    make_item(owner, "prompt", name="review", content=FIVE_LINES)

    response = other_api.get(by_name_url("review"), {"start_line": 1})

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_partial_read_anonymously_is_401(anon: Any, item: Any) -> None:
    response = anon.get(url(item.type_name, "detail", item.pk), {"start_line": 1})

    assert response.status_code == 401
    assert response.json()["error"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Bearer resource_metadata=")
