"""``mode=keyword`` points at a query word past the indexed opening: the first line holding it,
from the whole content read once for all the query's words (not once per word and per
expression), case folded as PostgreSQL folds it on both databases."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from content.dbops import FTS_CONTENT_CHARS
from content.models import Note
from content.tests.search_support import make_note, search

pytestmark = pytest.mark.django_db

FILLER = "filler line\n" * (FTS_CONTENT_CHARS // 12 + 10)  # past both databases' openings
DEEP_LINE = FILLER.count("\n") + 3


def _long_note(api: Any, deep: str) -> tuple[str, str]:
    content = FILLER + "one more\ntwo more\n" + deep + "\nthe end\n"
    return make_note(api, "Log", content), content


def _match(api: Any, q: str, note: str) -> dict[str, Any]:
    found = search(api, q, mode="keyword")
    (row,) = [r for r in found["results"] if r["id"] == note]
    return row["match"]


def test_a_deep_word_is_located_on_its_line_whatever_its_case(api: Any) -> None:
    note, content = _long_note(api, "Notes from the École normale, ÉCOLE again")
    match = _match(api, "école", note)
    assert match["field"] == "content"
    assert match["start_line"] == match["end_line"] == DEEP_LINE
    assert "École normale" in match["snippet"]
    assert match["snippet"].startswith("…")  # cut before: the line is far into the content
    assert [match["snippet"][a:b] for a, b in match["highlights"]] == ["École", "ÉCOLE"]
    assert Note.objects.get(pk=note).content == content  # a search writes nothing


def test_a_long_content_is_read_once_for_all_the_query_words(api: Any) -> None:
    # Each query word matches by its stem only, so each is looked for as written, in vain.
    note, _ = _long_note(api, "we connect the nodes")
    q = "connections connected connecting"
    table = re.escape(connection.ops.quote_name(Note._meta.db_table))
    # The whole column, not a prefix the opening's lookups cut (SUBSTR(content, 1, position)).
    whole = re.compile(
        r"(?<!SUBSTR\()(?<!SUBSTRING\()"
        + table
        + r"\."
        + re.escape(connection.ops.quote_name("content"))
    )
    with CaptureQueriesContext(connection) as ctx:
        found = search(api, q, mode="keyword")
    assert [r["id"] for r in found["results"]] == [note]
    reads = [query["sql"] for query in ctx.captured_queries if whole.search(query["sql"])]
    assert len(reads) == 1, reads
    # No word occurs as written: the match falls back to the title.
    assert found["results"][0]["match"]["field"] == "title"


def test_the_longest_word_found_anywhere_comes_before_a_shorter_one_in_the_opening(
    api: Any,
) -> None:
    content = "zebra here\n" + FILLER + "a giraffe there\n"
    note = make_note(api, "Zoo", content)
    match = _match(api, "zebra giraffe", note)
    assert match["field"] == "content"
    assert match["start_line"] == content.count("\n")
    assert "giraffe" in match["snippet"]
