"""str-replace beyond one replacement: replace_all, edits and dry_run (SPEC §4.3)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from content.history.codec import ops_patch
from content.tests.editing_support import (
    TYPES,
    by_name_url,
    iso,
    make_item,
    row_state,
    url,
    versions,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(params=TYPES)
def kind(request: Any) -> str:
    return request.param


def patch(client: Any, item: Any, body: dict[str, Any], query: str = "") -> Any:
    return client.patch(url(item.type_name, "str-replace", item.pk) + query, body, format="json")


def reloaded(item: Any) -> Any:
    return type(item).objects.get(pk=item.pk)


# --- replace_all --------------------------------------------------------------------------------


def test_replace_all_replaces_every_occurrence_and_counts_them(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(owner, kind, content="colour\nthe colour red\ncolour")

    response = patch(api, item, {"old_str": "colour", "new_str": "color", "replace_all": True})

    assert response.status_code == 200, response.content
    row = reloaded(item)
    assert response.json() == {
        "match_type": "exact",
        "line": 1,
        "replacements": 3,
        "id": str(item.pk),
        "updated_at": iso(row.updated_at),
    }
    assert row.content == "color\nthe color red\ncolor"
    assert len(versions(item)) == 2


def test_replace_all_of_a_single_occurrence_counts_one(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="alpha beta")

    response = patch(api, item, {"old_str": "beta", "new_str": "gamma", "replace_all": True})

    assert response.status_code == 200
    assert response.json()["replacements"] == 1


def test_replace_all_without_a_match_is_no_match_and_saves_nothing(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="alpha beta")
    before = row_state(item)

    response = patch(api, item, {"old_str": "gamma", "new_str": "x", "replace_all": True})

    assert response.status_code == 400
    assert response.json()["error"] == "no_match"
    assert "edit_index" not in response.json()
    assert row_state(item) == before


# --- edits --------------------------------------------------------------------------------------


def test_edits_apply_together_as_one_version_with_one_result_each(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(owner, kind, content="one\ntwo\nthree\ntwo-b\nfour")
    body = {
        "edits": [
            {"old_str": "four", "new_str": "FOUR"},
            {"old_str": "one\n", "new_str": ""},
            {"old_str": "two", "new_str": "2", "replace_all": True},
        ]
    }

    response = patch(api, item, body)

    assert response.status_code == 200, response.content
    row = reloaded(item)
    assert response.json() == {
        "edits": [
            {"match_type": "exact", "line": 5, "replacements": 1},
            {"match_type": "exact", "line": 1, "replacements": 1},
            {"match_type": "exact", "line": 2, "replacements": 2},
        ],
        "id": str(item.pk),
        "updated_at": iso(row.updated_at),
    }
    assert row.content == "2\nthree\n2-b\nFOUR"
    history = versions(item)
    assert len(history) == 2
    assert history[-1].changed_fields == ["content"]


def test_edits_record_a_reverse_patch_that_restores_the_original(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="a1 b2 c3 d4")
    body = {"edits": [{"old_str": "a1", "new_str": "AAAA"}, {"old_str": "c3", "new_str": ""}]}

    assert patch(api, item, body).status_code == 200

    version = api.get(url("note", "history", item.pk) + "1/")
    assert version.json()["content"] == "a1 b2 c3 d4"
    assert versions(item)[-1].content_patch == ops_patch([(0, 4, "a1"), (8, 0, "c3")])


def test_edits_are_matched_against_the_original_not_each_others_output(
    api: Any, owner: Any
) -> None:
    item = make_item(owner, "note", content="alpha beta")
    body = {
        "edits": [{"old_str": "alpha", "new_str": "gamma"}, {"old_str": "gamma", "new_str": "x"}]
    }

    response = patch(api, item, body)

    assert response.status_code == 400
    assert response.json()["error"] == "no_match"
    assert response.json()["edit_index"] == 1
    assert response.json()["message"].startswith("Edit 1: ")


def test_overlapping_edits_are_refused_naming_both_edits_and_their_lines(
    api: Any, owner: Any, kind: str
) -> None:
    item = make_item(owner, kind, content="head\nalpha beta gamma\ntail")
    before = row_state(item)
    body = {
        "edits": [
            {"old_str": "tail", "new_str": "TAIL"},
            {"old_str": "alpha beta", "new_str": "x"},
            {"old_str": "beta gamma", "new_str": "y"},
        ]
    }

    response = patch(api, item, body)

    assert response.status_code == 400
    data = response.json()
    assert data["error"] == "overlapping_edits"
    assert data["edit_indexes"] == [1, 2]
    assert data["lines"] == [2, 2]
    assert "merge" in data["message"]
    assert row_state(item) == before


def test_a_failing_edit_fails_the_request_with_its_edit_index(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="x TODO y TODO z")
    before = row_state(item)
    body = {"edits": [{"old_str": "x", "new_str": "X"}, {"old_str": "TODO", "new_str": "DONE"}]}

    response = patch(api, item, body)

    assert response.status_code == 400
    data = response.json()
    assert data["error"] == "multiple_matches"
    assert data["edit_index"] == 1
    assert data["total_matches"] == 2
    assert row_state(item) == before


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        (
            {"old_str": "a", "new_str": "b", "edits": [{"old_str": "a", "new_str": "b"}]},
            {"old_str", "new_str"},
        ),
        ({"replace_all": True, "edits": [{"old_str": "a", "new_str": "b"}]}, {"replace_all"}),
        ({}, {"old_str", "new_str"}),
        ({"new_str": "b"}, {"old_str"}),
        ({"edits": []}, {"edits"}),
        ({"edits": [{"old_str": "a", "new_str": "b"}] * 101}, {"edits"}),
        ({"edits": [{"old_str": "", "new_str": "b"}]}, {"edits"}),
        ({"edits": [{"old_str": "a", "new_str": "b", "colour": 1}]}, {"edits"}),
    ],
)
def test_malformed_edit_requests_are_validation_errors(
    api: Any, owner: Any, body: dict[str, Any], fields: set[str]
) -> None:
    item = make_item(owner, "note", content="a")
    before = row_state(item)

    response = patch(api, item, body)

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert set(response.json()["fields"]) == fields
    assert row_state(item) == before


def test_edits_that_change_nothing_write_nothing(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="same text")
    before = row_state(item)

    response = patch(api, item, {"edits": [{"old_str": "same", "new_str": "same"}]})

    assert response.status_code == 200
    assert response.json()["updated_at"] == iso(item.updated_at)
    assert row_state(item) == before


def test_edits_past_the_content_limit_are_refused(api: Any, owner: Any, settings: Any) -> None:
    settings.TIDDLY_LIMITS = {**settings.TIDDLY_LIMITS, "content": 20}
    item = make_item(owner, "note", content="0123456789")
    body = {"edits": [{"old_str": "0", "new_str": "x" * 8}, {"old_str": "9", "new_str": "y" * 8}]}

    response = patch(api, item, body)

    assert response.status_code == 400
    assert response.json()["error"] == "field_limit_exceeded"


# --- prompts: templates validated on the final state, by id and by name -------------------------


def test_prompt_edits_validate_the_final_template_with_new_arguments(api: Any, owner: Any) -> None:
    prompt = make_item(
        owner,
        "prompt",
        content="Hi {{ who }} from {{ city }}",
        arguments=[{"name": "who"}, {"name": "city"}],
    )
    body = {
        "edits": [
            {"old_str": "Hi", "new_str": "Hello"},
            {"old_str": " from {{ city }}", "new_str": ""},
        ],
        "arguments": [{"name": "who"}],
    }

    response = api.patch(by_name_url(prompt.name, str_replace=True), body, format="json")

    assert response.status_code == 200, response.content
    row = reloaded(prompt)
    assert row.content == "Hello {{ who }}"
    assert [a["name"] for a in row.arguments] == ["who"]
    assert len(versions(prompt)) == 2
    assert versions(prompt)[-1].changed_fields == ["arguments", "content"]


def test_prompt_edits_that_break_the_template_are_invalid_template(api: Any, owner: Any) -> None:
    prompt = make_item(owner, "prompt", content="Hi {{ who }}", arguments=[{"name": "who"}])
    before = row_state(prompt)
    body = {"edits": [{"old_str": "{{ who }}", "new_str": "{{ whom }}"}], "dry_run": True}

    by_id = patch(api, prompt, body)
    by_name = api.patch(by_name_url(prompt.name, str_replace=True), body, format="json")

    for response in (by_id, by_name):
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_template"
    assert row_state(prompt) == before


def test_prompt_replace_all_by_name(api: Any, owner: Any) -> None:
    prompt = make_item(owner, "prompt", content="Python is nice. Python!")

    response = api.patch(
        by_name_url(prompt.name, str_replace=True),
        {"old_str": "Python", "new_str": "Go", "replace_all": True},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["replacements"] == 2
    assert reloaded(prompt).content == "Go is nice. Go!"


# --- dry_run ------------------------------------------------------------------------------------


def test_dry_run_returns_the_diff_and_moves_nothing(api: Any, owner: Any, kind: str) -> None:
    item = make_item(owner, kind, content="one\ntwo\nthree\n")
    before = row_state(item)

    response = patch(
        api,
        item,
        {"old_str": "two", "new_str": "TWO", "dry_run": True},
        "?include_updated_entity=true",
    )

    assert response.status_code == 200, response.content
    data = response.json()
    assert data["dry_run"] is True
    assert (data["match_type"], data["line"]) == ("exact", 2)
    assert data["updated_at"] == iso(item.updated_at)
    assert data["diff"].splitlines()[-4:] == [" one", "-two", "+TWO", " three"]
    assert data["diff_truncated"] is False
    assert data["item"]["content"] == "one\ntwo\nthree\n"
    assert row_state(item) == before  # updated_at, last_used_at, content, history


def test_dry_run_of_edits_lists_every_result(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="a\nb\nc\n")
    body = {
        "edits": [{"old_str": "a", "new_str": "A"}, {"old_str": "c", "new_str": "C"}],
        "dry_run": True,
    }

    response = patch(api, item, body)

    assert response.status_code == 200
    assert response.json()["edits"] == [
        {"match_type": "exact", "line": 1, "replacements": 1},
        {"match_type": "exact", "line": 3, "replacements": 1},
    ]
    assert "+A" in response.json()["diff"]
    assert "+C" in response.json()["diff"]
    assert reloaded(item).content == "a\nb\nc\n"


def test_dry_run_diff_is_cut_at_20000_characters(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="x\n" * 20_000)

    response = patch(
        api, item, {"old_str": "x", "new_str": "y", "replace_all": True, "dry_run": True}
    )

    assert response.status_code == 200
    assert response.json()["diff_truncated"] is True
    assert len(response.json()["diff"]) <= 20_000
    assert response.json()["replacements"] == 20_000


def test_dry_run_checks_expected_updated_at(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="alpha")
    stale = iso(item.updated_at - timedelta(seconds=5))

    response = patch(
        api,
        item,
        {"old_str": "alpha", "new_str": "b", "dry_run": True, "expected_updated_at": stale},
    )

    assert response.status_code == 409
    assert response.json()["error"] == "conflict"


def test_dry_run_that_changes_nothing_has_an_empty_diff(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="alpha")

    response = patch(api, item, {"old_str": "alpha", "new_str": "alpha", "dry_run": True})

    assert response.status_code == 200
    assert (response.json()["diff"], response.json()["diff_truncated"]) == ("", False)


def test_dry_run_leaves_last_used_at_alone(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="alpha")
    used = timezone.now() - timedelta(days=3)
    type(item).objects.filter(pk=item.pk).update(last_used_at=used)

    assert (
        patch(api, item, {"old_str": "alpha", "new_str": "b", "dry_run": True}).status_code == 200
    )

    assert reloaded(item).last_used_at == used


def test_stranger_gets_not_found_for_edits_and_dry_runs(
    api: Any, other_api: Any, owner: Any
) -> None:
    item = make_item(owner, "note", content="alpha")
    body = {"edits": [{"old_str": "alpha", "new_str": "b"}], "dry_run": True}

    response = patch(other_api, item, body)

    assert response.status_code == 404
    assert json.loads(response.content)["error"] == "not_found"
