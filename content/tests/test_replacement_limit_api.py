"""str-replace past TIDDLY_MAX_REPLACEMENTS (SPEC §4.3 Cost): refused up front, nothing changed.

A replace_all of "a" over a note of ten million "a"s once took about a minute and 4 GB; now the
matches are counted first and a request past the limit is a 400 ``field_limit_exceeded`` on REST,
dry runs and ``edits`` alike, and an ``isError`` result over MCP.
"""

from __future__ import annotations

from typing import Any

import pytest

from content.tests.editing_support import make_item, row_state, url, versions

pytestmark = pytest.mark.django_db

LIMIT = 100_000  # the default of TIDDLY_MAX_REPLACEMENTS


def patch(client: Any, item: Any, body: dict[str, Any]) -> Any:
    return client.patch(url(item.type_name, "str-replace", item.pk), body, format="json")


def assert_refused(response: Any, count: int, limit: int = LIMIT) -> dict[str, Any]:
    assert response.status_code == 400, response.content
    body: dict[str, Any] = response.json()
    assert body["error"] == "field_limit_exceeded"
    assert (body["field"], body["length"], body["limit"]) == ("replacements", count, limit)
    assert f"would make {count} replacements" in body["message"]
    assert f"the limit is {limit}" in body["message"]
    return body


def test_replace_all_past_the_default_limit_is_refused_and_changes_nothing(
    api: Any, owner: Any
) -> None:
    item = make_item(owner, "note", content="a" * (LIMIT + 1))
    before = row_state(item)

    response = patch(api, item, {"old_str": "a", "new_str": "b", "replace_all": True})

    body = assert_refused(response, LIMIT + 1)
    assert "edit_index" not in body
    assert row_state(item) == before


def test_a_dry_run_past_the_limit_is_refused_too(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="a" * (LIMIT + 1))
    before = row_state(item)

    response = patch(
        api, item, {"old_str": "a", "new_str": "b", "replace_all": True, "dry_run": True}
    )

    assert_refused(response, LIMIT + 1)
    assert row_state(item) == before


def test_edits_count_together_and_the_edit_past_the_limit_is_named(
    api: Any, owner: Any, settings: Any
) -> None:
    settings.TIDDLY_MAX_REPLACEMENTS = 10
    item = make_item(owner, "note", content="x" * 6 + "\n" + "y" * 6)
    before = row_state(item)

    response = patch(
        api,
        item,
        {
            "edits": [
                {"old_str": "x", "new_str": "1", "replace_all": True},
                {"old_str": "y", "new_str": "2", "replace_all": True},
            ]
        },
    )

    body = assert_refused(response, 12, limit=10)
    assert body["edit_index"] == 1
    assert body["message"].startswith("Edit 1: ")
    assert row_state(item) == before


def test_whitespace_level_matches_count_against_the_limit(
    api: Any, owner: Any, settings: Any
) -> None:
    settings.TIDDLY_MAX_REPLACEMENTS = 10
    item = make_item(owner, "note", content="a \n" * 11)
    before = row_state(item)

    response = patch(api, item, {"old_str": "a\n", "new_str": "b\n", "replace_all": True})

    assert_refused(response, 11, limit=10)
    assert row_state(item) == before


def test_a_medium_replace_all_within_the_limit_still_succeeds(api: Any, owner: Any) -> None:
    item = make_item(owner, "note", content="a-" * 50_000)

    response = patch(api, item, {"old_str": "a", "new_str": "b", "replace_all": True})

    assert response.status_code == 200, response.content
    assert (response.json()["match_type"], response.json()["replacements"]) == ("exact", 50_000)
    assert type(item).objects.get(pk=item.pk).content == "b-" * 50_000
    assert len(versions(item)) == 2
