"""str-replace: PATCH /api/{type}/{id}/str-replace/ (SPEC §4.3, §4.4)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from content.tests.editing_support import (
    NULLABLE_TYPES,
    TYPES,
    expected_item,
    iso,
    make_item,
    row_state,
    url,
    versions,
)
from content.tests.helpers import item_body
from content.text.replace import NO_MATCH_SUGGESTION

pytestmark = pytest.mark.django_db

MULTIPLE_SUGGESTION = "Include more surrounding context to ensure uniqueness."


@pytest.fixture(params=TYPES)
def kind(request: Any) -> str:
    return request.param


def str_replace(client: Any, item: Any, body: dict[str, Any], **kwargs: Any) -> Any:
    path = url(item.type_name, "str-replace", item.pk)
    query = kwargs.pop("query", "")
    return client.patch(path + query, body, format="json", **kwargs)


def reloaded(item: Any) -> Any:
    return type(item).objects.get(pk=item.pk)


def success(item: Any, match_type: str, line: int) -> dict[str, Any]:
    """The minimal 200 body, against the row as it is now."""
    row = reloaded(item)
    return {
        "match_type": match_type,
        "line": line,
        "id": str(row.pk),
        "updated_at": iso(row.updated_at),
    }


def assert_edited(item: Any, content: str, *, before_versions: int) -> None:
    """The content is saved, updated_at moved on and exactly one version was recorded."""
    row = reloaded(item)
    assert row.content == content
    assert row.updated_at > item.updated_at
    history = versions(item)
    assert len(history) == before_versions + 1
    assert history[-1].version == before_versions + 1
    assert history[-1].changed_fields == ["content"]
    assert history[-1].action == "update"
    assert history[-1].created_at == row.updated_at


# --- the three matching levels ------------------------------------------------------------------


def test_exact_match_replaces_it_and_returns_the_minimal_body(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(owner, kind, content="alpha\nbeta\ngamma")

    response = str_replace(api, item, {"old_str": "beta", "new_str": "BETA\nDELTA"})

    assert response.status_code == 200
    assert response.json() == success(item, "exact", 2)
    assert response["ETag"]
    assert_edited(item, "alpha\nBETA\nDELTA\ngamma", before_versions=1)


def test_exact_match_inside_a_line_reports_that_line(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="one\ntwo three four\nfive")

    response = str_replace(api, item, {"old_str": "three", "new_str": "3"})

    assert response.status_code == 200
    assert response.json() == success(item, "exact", 2)
    assert_edited(item, "one\ntwo 3 four\nfive", before_versions=1)


def test_empty_new_str_deletes_the_match(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content="keep\ndrop me\nkeep")

    response = str_replace(api, item, {"old_str": "drop me\n", "new_str": ""})

    assert response.status_code == 200
    assert response.json() == success(item, "exact", 2)
    assert_edited(item, "keep\nkeep", before_versions=1)


def test_whitespace_normalized_match_ignores_crlf_and_trailing_spaces(
    api: Any, owner: Any, kind: str
) -> None:
    content = "head\r\ndef f():  \r\n    return 1\t\r\ntail"
    item = make_item(owner, kind, content=content)

    response = str_replace(
        api, item, {"old_str": "def f():\n    return 1", "new_str": "def g():\n    return 2"}
    )

    assert response.status_code == 200
    assert response.json() == success(item, "whitespace_normalized", 2)
    # The matched span ends before the last line's CR, so the line ending survives.
    assert_edited(item, "head\r\ndef g():\n    return 2\r\ntail", before_versions=1)


def test_whitespace_normalized_match_of_old_str_with_trailing_spaces(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="a\nvalue = 1\nb")

    response = str_replace(api, item, {"old_str": "value = 1   \r\n", "new_str": "value = 2\n"})

    assert response.status_code == 200
    assert response.json() == success(item, "whitespace_normalized", 2)
    assert_edited(item, "a\nvalue = 2\nb", before_versions=1)


def test_indentation_relative_match_reindents_new_str(api: Any, owner: Any, kind: str) -> None:
    content = "class A:\n    def f(self):\n        return 1\n\n    x = 0\n"
    item = make_item(owner, kind, content=content)

    response = str_replace(
        api,
        item,
        {
            "old_str": "def f(self):\n    return 1",
            "new_str": "def f(self):\n    if self:\n        return 2\n    return 1",
        },
    )

    assert response.status_code == 200
    assert response.json() == success(item, "indentation_relative", 2)
    expected = (
        "class A:\n    def f(self):\n        if self:\n            return 2\n        return 1\n"
        "\n    x = 0\n"
    )
    assert_edited(item, expected, before_versions=1)


def test_indentation_relative_match_with_two_spaces_for_four(api: Any, owner: Any) -> None:
    content = "if x:\n    a = 1\n    b = 2\nend"
    item = make_item(owner, "note", content=content)

    response = str_replace(
        api, item, {"old_str": "  a = 1\n  b = 2", "new_str": "  a = 10\n  b = 2\n  c = 3"}
    )

    assert response.status_code == 200
    assert response.json() == success(item, "indentation_relative", 2)
    assert_edited(item, "if x:\n    a = 10\n    b = 2\n    c = 3\nend", before_versions=1)


def test_exact_level_wins_over_looser_levels(api: Any, owner: Any) -> None:
    # "x = 1" also occurs indented; the exact occurrence alone is replaced.
    item = make_item(owner, "note", content="    x = 1\nx = 1 \ny")

    response = str_replace(api, item, {"old_str": "x = 1 \n", "new_str": "x = 2\n"})

    assert response.status_code == 200
    assert response.json() == success(item, "exact", 2)
    assert_edited(item, "    x = 1\nx = 2\ny", before_versions=1)


# --- response options and no-ops ----------------------------------------------------------------


def test_include_updated_entity_adds_the_full_item_as_a_get_returns_it(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(owner, kind, content="a\nb", title="Title", tags=["x"])

    response = str_replace(
        api, item, {"old_str": "b", "new_str": "c"}, query="?include_updated_entity=true"
    )

    assert response.status_code == 200
    get = api.get(url(kind, "detail", item.pk))
    assert response.json() == {**success(item, "exact", 2), "item": item_body(get)}
    assert response.json()["item"] == expected_item(item)
    assert response.json()["item"]["content"] == "a\nc"
    assert response["ETag"] == get["ETag"]


def test_include_updated_entity_false_keeps_the_minimal_body(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="a\nb")

    response = str_replace(
        api, item, {"old_str": "b", "new_str": "c"}, query="?include_updated_entity=false"
    )

    assert response.status_code == 200
    assert response.json() == success(item, "exact", 2)


def test_replacement_that_changes_nothing_writes_nothing(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content="alpha\nbeta")
    before = row_state(item)

    response = str_replace(api, item, {"old_str": "beta", "new_str": "beta"})

    assert response.status_code == 200
    assert response.json() == {
        "match_type": "exact",
        "line": 2,
        "id": str(item.pk),
        "updated_at": iso(item.updated_at),
    }
    assert row_state(item) == before
    assert len(versions(item)) == 1


def test_normalized_replacement_with_the_same_text_is_a_real_change(api: Any, owner: Any) -> None:
    # old_str == new_str, but the match (with its trailing spaces) differs from new_str.
    item = make_item(owner, "note", content="a  \nb")

    response = str_replace(api, item, {"old_str": "a\nb", "new_str": "a\nb"})

    assert response.status_code == 200
    assert response.json() == success(item, "whitespace_normalized", 1)
    assert_edited(item, "a\nb", before_versions=1)


# --- optimistic locking -------------------------------------------------------------------------


def test_stale_expected_updated_at_is_409_with_server_state_and_saves_nothing(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(owner, kind, content="alpha\nbeta")
    before = row_state(item)
    stale = item.updated_at - timedelta(seconds=1)

    response = str_replace(
        api,
        item,
        {"old_str": "beta", "new_str": "gamma", "expected_updated_at": stale.isoformat()},
    )

    assert response.status_code == 409
    get = api.get(url(kind, "detail", item.pk))
    assert response.json() == {
        "error": "conflict",
        "message": "This item was modified since you loaded it. Nothing was saved. Re-apply your "
        "change to server_state and retry with its updated_at as expected_updated_at.",
        "server_state": item_body(get),
    }
    assert row_state(item) == before


def test_conflict_after_another_edit_shows_that_edit(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="alpha\nbeta")
    loaded = api.get(url("note", "detail", item.pk)).json()
    first = str_replace(api, item, {"old_str": "alpha", "new_str": "ALPHA"})
    before = row_state(item)

    second = str_replace(
        api,
        item,
        {"old_str": "beta", "new_str": "BETA", "expected_updated_at": loaded["updated_at"]},
    )

    assert first.status_code == 200
    assert second.status_code == 409
    assert second.json()["server_state"] == expected_item(item)
    assert second.json()["server_state"]["content"] == "ALPHA\nbeta"
    assert row_state(item) == before


@pytest.mark.parametrize("offset", [timedelta(0), timedelta(seconds=5)])
def test_current_or_later_expected_updated_at_edits(
    api: Any, owner: Any, offset: timedelta
) -> None:
    item = make_item(owner, "note", content="alpha\nbeta")
    expected = iso(item.updated_at + offset)

    response = str_replace(
        api, item, {"old_str": "beta", "new_str": "gamma", "expected_updated_at": expected}
    )

    assert response.status_code == 200
    assert response.json() == success(item, "exact", 2)
    assert_edited(item, "alpha\ngamma", before_versions=1)


def test_stale_if_match_is_412_with_server_state_and_saves_nothing(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(owner, kind, content="alpha\nbeta")
    old_etag = api.get(url(kind, "detail", item.pk))["ETag"]
    str_replace(api, item, {"old_str": "alpha", "new_str": "ALPHA"})
    before = row_state(item)

    response = str_replace(api, item, {"old_str": "beta", "new_str": "x"}, HTTP_IF_MATCH=old_etag)

    assert response.status_code == 412
    body = response.json()
    assert body["error"] == "precondition_failed"
    assert "If-Match" in body["message"]
    assert body["server_state"] == item_body(api.get(url(kind, "detail", item.pk)))
    assert row_state(item) == before


@pytest.mark.parametrize("header", ["current", "*", "weak"])
def test_matching_if_match_edits(api: Any, owner: Any, header: str) -> None:
    item = make_item(owner, "note", content="alpha\nbeta")
    etag = api.get(url("note", "detail", item.pk))["ETag"]
    value = {"current": etag, "*": "*", "weak": f'"nope", W/{etag}'}[header]

    response = str_replace(api, item, {"old_str": "beta", "new_str": "x"}, HTTP_IF_MATCH=value)

    assert response.status_code == 200
    assert_edited(item, "alpha\nx", before_versions=1)


# --- errors -------------------------------------------------------------------------------------


def test_no_match_is_400_with_message_and_suggestion(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content="alpha\nbeta")
    before = row_state(item)

    response = str_replace(api, item, {"old_str": "zzz completely different", "new_str": "x"})

    assert response.status_code == 400
    assert response.json() == {
        "error": "no_match",
        "message": "The specified text was not found in the content.",
        "suggestion": NO_MATCH_SUGGESTION,
    }
    assert row_state(item) == before


def test_no_match_suggestion_names_a_clearly_close_line_and_its_number(
    api: Any, owner: Any
) -> None:
    content = "intro\n\ndef compute_total(items):\n    return sum(items)\n"
    item = make_item(owner, "note", content=content)
    before = row_state(item)

    response = str_replace(
        api,
        item,
        {"old_str": "def compute_totals(items):\n    return sum(items)", "new_str": "x"},
    )

    assert response.status_code == 400
    assert response.json() == {
        "error": "no_match",
        "message": "The specified text was not found in the content.",
        "suggestion": NO_MATCH_SUGGESTION + ' Closest line (line 3): "def compute_total(items):"',
    }
    assert row_state(item) == before


def test_multiple_matches_lists_each_with_two_lines_of_context(
    api: Any, owner: Any, kind: str
) -> None:
    content = "\n".join(["a", "b", "TODO", "c", "d", "e", "f", "TODO", "g"])
    item = make_item(owner, kind, content=content)
    before = row_state(item)

    response = str_replace(api, item, {"old_str": "TODO", "new_str": "DONE"})

    assert response.status_code == 400
    assert response.json() == {
        "error": "multiple_matches",
        "message": "old_str matches 2 places (exact match); it must match exactly one (or set "
        "replace_all to change every one). Nothing was changed.",
        "match_type": "exact",
        "matches": [
            {"field": "content", "line": 3, "context": "a\nb\nTODO\nc\nd"},
            {"field": "content", "line": 8, "context": "e\nf\nTODO\ng"},
        ],
        "total_matches": 2,
        "suggestion": MULTIPLE_SUGGESTION,
    }
    assert row_state(item) == before


def test_multiple_matches_lists_at_most_twenty_but_counts_them_all(api: Any, owner: Any) -> None:
    content = "\n".join(f"row {n} TODO" for n in range(1, 58))
    item = make_item(owner, "note", content=content)
    before = row_state(item)

    response = str_replace(api, item, {"old_str": "TODO", "new_str": "DONE"})

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "multiple_matches"
    assert body["total_matches"] == 57
    assert body["message"].startswith("old_str matches 57 places (exact match)")
    assert [m["line"] for m in body["matches"]] == list(range(1, 21))
    assert body["matches"][0]["context"] == "row 1 TODO\nrow 2 TODO\nrow 3 TODO"
    assert body["matches"][19]["context"] == "\n".join(f"row {n} TODO" for n in range(18, 23))
    assert body["suggestion"] == MULTIPLE_SUGGESTION
    assert row_state(item) == before


def test_multiple_matches_at_the_whitespace_normalized_level_say_so(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="x = 1 \ny\nx = 1\t\nz")

    response = str_replace(api, item, {"old_str": "x = 1\ny", "new_str": "q"})

    # "x = 1\ny" is not in the text verbatim; normalised, it occurs once.
    assert response.status_code == 200
    assert response.json() == success(item, "whitespace_normalized", 1)

    item = make_item(owner, "note", content="x = 1 \ny\nx = 1\t\ny")
    before = row_state(item)
    response = str_replace(api, item, {"old_str": "x = 1\ny", "new_str": "q"})

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "multiple_matches"
    assert body["match_type"] == "whitespace_normalized"
    assert [(m["line"], m["context"]) for m in body["matches"]] == [
        (1, "x = 1 \ny\nx = 1\t\ny"),
        (3, "x = 1 \ny\nx = 1\t\ny"),
    ]
    assert row_state(item) == before


@pytest.mark.parametrize("kind", NULLABLE_TYPES)
def test_str_replace_on_null_content_is_content_empty(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content=None)
    before = row_state(item)

    response = str_replace(api, item, {"old_str": "a", "new_str": "b"})

    assert response.status_code == 400
    assert response.json() == {
        "error": "content_empty",
        "message": f"This {kind} has no content to edit. Use PATCH (or update) to set content "
        "first.",
    }
    assert row_state(item) == before


def test_result_longer_than_the_content_limit_is_field_limit_exceeded(
    api: Any, owner: Any, kind: str, settings: Any
) -> None:
    item = make_item(owner, kind, content="0123456789")
    before = row_state(item)
    settings.TIDDLY_LIMITS = {**settings.TIDDLY_LIMITS, "content": 20}

    response = str_replace(api, item, {"old_str": "5", "new_str": "x" * 20})

    assert response.status_code == 400
    assert response.json() == {
        "error": "field_limit_exceeded",
        "message": "content is 29 characters long; the limit is 20. Shorten it and retry.",
        "field": "content",
        "length": 29,
        "limit": 20,
    }
    assert row_state(item) == before


def test_result_exactly_at_the_content_limit_is_saved(api: Any, owner: Any, settings: Any) -> None:
    item = make_item(owner, "note", content="0123456789")
    settings.TIDDLY_LIMITS = {**settings.TIDDLY_LIMITS, "content": 20}

    response = str_replace(api, item, {"old_str": "5", "new_str": "x" * 11})

    assert response.status_code == 200
    assert_edited(item, "01234" + "x" * 11 + "6789", before_versions=1)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"old_str": "", "new_str": "x"}, "old_str"),
        ({"new_str": "x"}, "old_str"),
        ({"old_str": "a"}, "new_str"),
        ({"old_str": None, "new_str": "x"}, "old_str"),
        ({"old_str": ["a"], "new_str": "x"}, "old_str"),
        ({"old_str": "a", "new_str": None}, "new_str"),
        (
            {"old_str": "a", "new_str": "b", "expected_updated_at": "yesterday"},
            "expected_updated_at",
        ),
        ({"old_str": "a", "new_str": "b", "arguments": []}, "arguments"),
        ({"old_str": "a", "new_str": "b", "content": "c"}, "content"),
    ],
    ids=[
        "empty-old",
        "missing-old",
        "missing-new",
        "null-old",
        "list-old",
        "null-new",
        "bad-date",
        "arguments-on-note",
        "unknown-field",
    ],
)
def test_invalid_body_is_a_validation_error_and_saves_nothing(
    api: Any, owner: Any, body: dict[str, Any], field: str
) -> None:
    item = make_item(owner, "note", content="a")
    before = row_state(item)

    response = str_replace(api, item, body)

    assert response.status_code == 400
    data = response.json()
    assert data["error"] == "validation_error"
    assert list(data["fields"]) == [field]
    assert data["message"].startswith(f"Invalid request. Fix these fields and retry. {field}: ")
    assert row_state(item) == before


def test_invalid_include_updated_entity_is_a_validation_error(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="a")
    before = row_state(item)

    response = str_replace(
        api, item, {"old_str": "a", "new_str": "b"}, query="?include_updated_entity=perhaps"
    )

    assert response.status_code == 400
    assert list(response.json()["fields"]) == ["include_updated_entity"]
    assert row_state(item) == before


@pytest.mark.parametrize("old_str", [" ", "   ", "\n\n", "\t \n "])
def test_whitespace_only_old_str_without_an_exact_match_is_no_match(
    api: Any, owner: Any, old_str: str
) -> None:
    content = "\n".join(f"    indented {n}" for n in range(2000))
    item = make_item(owner, "note", content=content.replace(" ", "").replace("\n", "|"))
    before = row_state(item)

    response = str_replace(api, item, {"old_str": old_str, "new_str": "x"})

    assert response.status_code == 400
    assert response.json() == {
        "error": "no_match",
        "message": "The specified text was not found in the content.",
        "suggestion": NO_MATCH_SUGGESTION,
    }
    assert row_state(item) == before


def test_whitespace_only_old_str_with_one_exact_match_replaces_it(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="a\tb")

    response = str_replace(api, item, {"old_str": "\t", "new_str": " "})

    assert response.status_code == 200
    assert response.json() == success(item, "exact", 1)
    assert_edited(item, "a b", before_versions=1)


def test_unicode_and_line_separators_round_trip(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="naïve café\n😀 emoji")

    response = str_replace(api, item, {"old_str": "😀", "new_str": "🎉\u2028x"})

    assert response.status_code == 200
    assert response.json() == success(item, "exact", 2)
    assert_edited(item, "naïve café\n🎉\u2028x emoji", before_versions=1)


@pytest.mark.parametrize("field", ["old_str", "new_str"])
def test_nul_bytes_are_a_validation_error(api: Any, owner: Any, field: str) -> None:
    item = make_item(owner, "note", content="a\x01b")
    before = row_state(item)

    response = str_replace(api, item, {"old_str": "a", "new_str": "b", field: "x\x00y"})

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert response.json()["fields"] == {field: ["Null characters are not allowed."]}
    assert row_state(item) == before


# --- states and access --------------------------------------------------------------------------


def test_archived_items_are_editable_by_id(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content="alpha\nbeta")
    archived_at = timezone.now() - timedelta(days=1)
    type(item).objects.filter(pk=item.pk).update(archived_at=archived_at)

    response = str_replace(api, item, {"old_str": "beta", "new_str": "gamma"})

    assert response.status_code == 200
    assert response.json() == success(item, "exact", 2)
    assert_edited(item, "alpha\ngamma", before_versions=1)
    assert reloaded(item).archived_at == archived_at


def test_deleted_items_are_404(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content="alpha\nbeta")
    type(item).objects.filter(pk=item.pk).update(deleted_at=timezone.now())
    before = row_state(item)

    response = str_replace(api, item, {"old_str": "beta", "new_str": "gamma"})

    assert response.status_code == 404
    assert response.json() == {
        "error": "not_found",
        "message": f"No {kind} with id {item.pk} was found.",
    }
    assert row_state(item) == before


def test_a_strangers_item_is_404_and_untouched(other_api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content="alpha\nbeta")
    before = row_state(item)

    response = str_replace(other_api, item, {"old_str": "beta", "new_str": "gamma"})

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert row_state(item) == before


def test_unknown_id_is_404(api: Any) -> None:
    path = reverse("note-str-replace", args=["0190aaaa-0000-7000-8000-000000000000"])

    response = api.patch(path, {"old_str": "a", "new_str": "b"}, format="json")

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_anonymous_is_401_and_untouched(anon: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="alpha\nbeta")
    before = row_state(item)

    response = str_replace(anon, item, {"old_str": "beta", "new_str": "gamma"})

    assert response.status_code == 401
    assert response.json()["error"] == "not_authenticated"
    assert row_state(item) == before


# --- history ------------------------------------------------------------------------------------


def test_edit_records_source_and_token_prefix_and_a_patch_not_a_copy(api: Any, owner: Any) -> None:
    content = "\n".join(f"line {n}" for n in range(5000))
    item = make_item(owner, "note", content=content)

    response = str_replace(
        api,
        item,
        {"old_str": "line 2500\n", "new_str": "edited\n"},
        HTTP_X_REQUEST_SOURCE="MyAgent",
    )

    assert response.status_code == 200
    version = versions(item)[-1]
    assert version.version == 2
    assert version.source == "myagent"
    assert version.token_prefix is not None
    assert api.token.startswith(version.token_prefix)
    assert version.content_snapshot is None
    assert version.content_patch is not None
    assert len(version.content_patch) < 100
