"""Hybrid search's keyword leg reads the content's indexed opening, not whole contents (SPEC §16),
on both databases: PostgreSQL's stored column with a trigram index, SQLite's virtual column with
a covering (owner, opening) index."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from django.db import connection

from content.dbops import FTS_CONTENT_CHARS
from content.models import Note
from content.queries import lists
from content.queries.search import keyword_ranking
from content.tests.search_support import _fresh_index, make_note  # noqa: F401

pytestmark = pytest.mark.django_db


def ranked(owner: Any, q: str, *, whole_content: bool) -> list[str]:
    params = replace(lists.ListParams(q=q), q_whole_content=whole_content)
    return [str(r.item_id) for r in keyword_ranking(owner, ["note"], params)]


def opening_ids(owner: Any, q: str) -> list[str]:
    ids = Note.objects.filter(owner=owner, pk__in=lists._opening_contains(owner, Note, q))
    return [str(pk) for pk in ids.values_list("pk", flat=True)]


def test_the_opening_is_searched_case_insensitively_and_owner_by_owner(
    api: Any, other_api: Any, owner: Any
) -> None:
    early = make_note(api, "Ops", "Checklist: DRAIN the Zebrafish nodes first.")
    deep = make_note(api, "Log", "filler line\n" * (FTS_CONTENT_CHARS // 12 + 10) + "zebrafish")
    theirs = make_note(other_api, "Theirs", "zebrafish zebrafish")
    assert ranked(owner, "zebrafish", whole_content=False) == [early]
    assert sorted(ranked(owner, "zebrafish", whole_content=True)) == sorted([early, deep])
    assert theirs not in ranked(owner, "zebrafish", whole_content=True)
    # LIKE's wildcards in the query are literal.
    assert opening_ids(owner, "drain%nodes") == []
    assert opening_ids(owner, "drain_the") == []
    assert opening_ids(owner, "drain the") == [early]
    Note.objects.filter(pk=early).update(content="Now about something else.")
    assert ranked(owner, "zebrafish", whole_content=False) == []  # the opening follows edits


def test_the_opening_index_covers_the_hybrid_keyword_leg(owner: Any) -> None:
    """The plan reads the index, not the table (whose rows hold whole contents). Fails if a
    later migration rebuilt the table and dropped the column or its index."""
    subquery = lists._opening_contains(owner, Note, "kubern")
    sql, params = subquery.sql, subquery.params
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            plan = " ".join(str(row[-1]) for row in cursor.fetchall())
            # (SQLite reads an indexed virtual column from the index entry: no table row is read,
            # though its plan does not call the index covering.)
            assert "USING INDEX content_note_opening (owner_id=?)" in plan, plan
        else:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute(f"EXPLAIN {sql}", params)
            plan = " ".join(row[0] for row in cursor.fetchall())
            assert "content_note_content_trgm" in plan, plan
