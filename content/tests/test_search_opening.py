"""Hybrid search's keyword leg reads the content's indexed opening, not whole contents (SPEC §16),
on both databases: PostgreSQL's stored column with a trigram GIN index, SQLite's FTS5 trigram
index kept by triggers."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from django.db import connection

from content.dbops import (
    FTS_CONTENT_CHARS,
    HEAD_TEXT_COLUMN,
    OPENING_COLUMN,
    SQLITE_OPENING_CHARS,
)
from content.models import Note
from content.queries import fulltext, lists
from content.search.ranking import keyword_ranking
from content.tests.search_support import _fresh_index, index, make_note  # noqa: F401

pytestmark = pytest.mark.django_db


def ranked(owner: Any, q: str, *, whole_content: bool) -> list[str]:
    params = replace(lists.ListParams(q=q), q_whole_content=whole_content)
    return [str(r.item_id) for r in keyword_ranking(owner, ["note"], params)]


def hits(model: Any, q: str) -> Any:
    """The index's subquery: PostgreSQL's (content opening), SQLite's (short fields too)."""
    if connection.vendor == "sqlite":
        return fulltext.indexed_hits(model, q)
    return lists._indexed_contains(model, OPENING_COLUMN, q)


def opening_ids(owner: Any, q: str) -> list[str]:
    ids = Note.objects.filter(owner=owner, pk__in=hits(Note, q))
    return [str(pk) for pk in ids.values_list("pk", flat=True)]


def test_the_opening_is_searched_case_insensitively_and_owner_by_owner(
    api: Any, other_api: Any, owner: Any
) -> None:
    early = make_note(api, "Ops", "Checklist: DRAIN the Zebrafish nodes first.")
    deep = make_note(api, "Log", "filler line\n" * (FTS_CONTENT_CHARS // 12 + 10) + "zebrafish")
    theirs = make_note(other_api, "Theirs", "zebrafish zebrafish")
    # Words are found in whole contents (round 4: SQLite's word index, PostgreSQL's word pieces),
    # by hybrid's leg too.
    assert sorted(ranked(owner, "zebrafish", whole_content=False)) == sorted([early, deep])
    assert sorted(ranked(owner, "zebrafish", whole_content=True)) == sorted([early, deep])
    assert theirs not in ranked(owner, "zebrafish", whole_content=True)
    # LIKE's and GLOB's wildcards in the query are literal.
    for wild in ("drain%nodes", "drain_the", "drain*nodes", "drain?the", "[d]rain"):
        assert opening_ids(owner, wild) == [], wild
    assert opening_ids(owner, "drain the") == [early]
    # A substring is exact: its trigrams in order, across words, quotes literal; under three
    # characters (no trigram) it is still found.
    assert opening_ids(owner, "n the zebra") == [early]
    assert opening_ids(owner, "the drain") == []  # both trigram sets, not in that order
    assert opening_ids(owner, "zebrafish nodes first") == [early]
    assert opening_ids(owner, "st.") == [early]
    assert opening_ids(owner, "ns") == []
    assert opening_ids(owner, "ps") == ([early] if connection.vendor == "sqlite" else [])  # "Ops"
    quoted = make_note(api, "Quote", 'say "hi there" twice')
    assert opening_ids(owner, '"hi there"') == [quoted]
    assert opening_ids(owner, '"hi') == [quoted]
    marked = make_note(api, "Marks", "Costs *50%* of [the] total? _yes_")
    for literal in ("*50%*", "[the]", "total?", "_yes_"):
        assert opening_ids(owner, literal) == [marked], literal
    # The index follows edits, bulk writes and deletes.
    Note.objects.filter(pk=early).update(content="Now about something else.")
    assert early not in ranked(owner, "zebrafish", whole_content=False)
    assert opening_ids(owner, "something else") == [early]
    Note.objects.filter(pk=early).update(title="Renamed")  # content untouched: still indexed
    assert opening_ids(owner, "something else") == [early]
    if connection.vendor == "sqlite":  # SQLite's index holds the short fields too
        assert opening_ids(owner, "renamed") == [early]
        assert opening_ids(owner, "ops") == []
    Note.objects.bulk_create([Note(owner=owner, title="Bulk", content="Quokka colony")])
    assert len(opening_ids(owner, "quokka")) == 1
    Note.objects.filter(pk=early).delete()
    assert opening_ids(owner, "something else") == []


def test_the_opening_index_covers_the_hybrid_keyword_leg(owner: Any) -> None:
    """The plan reads the index, not the table (whose rows hold whole contents)."""
    subquery = hits(Note, "kubern")
    sql, params = subquery.sql, subquery.params
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            plan = " ".join(str(row[-1]) for row in cursor.fetchall())
            # One MATCH of the trigram index (head and opening: a phrase of trigrams, answered
            # from positions, no row GLOB-checked), then each hit's key by primary key.
            assert plan.count("SCAN f VIRTUAL TABLE INDEX 0:M") == 1, plan
            assert plan.count("SEARCH k USING INTEGER PRIMARY KEY") == 1, plan
            cursor.execute("SELECT sql FROM sqlite_master WHERE name = 'content_note_search'")
            assert "detail='full'" in cursor.fetchone()[0]
        else:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute(f"EXPLAIN {sql}", params)
            plan = " ".join(row[0] for row in cursor.fetchall())
            assert "content_note_content_trgm" in plan, plan
            head = lists._indexed_contains(Note, HEAD_TEXT_COLUMN, "kubern")
            cursor.execute(f"EXPLAIN {head.sql}", head.params)
            plan = " ".join(row[0] for row in cursor.fetchall())
            assert f"content_note_{HEAD_TEXT_COLUMN}" in plan, plan


def test_content_is_the_last_column_on_sqlite() -> None:
    """SQLite reads a row's columns in order: a column after a large content costs a walk of its
    overflow pages (content.dbops.sqlite_opening_sql)."""
    tables = ["content_note", "content_bookmark", "prompts_prompt"]
    with connection.cursor() as cursor:
        for table in tables:
            columns = [
                c.name for c in connection.introspection.get_table_description(cursor, table)
            ]
            stored = [c for c in columns if c != "content_opening"]
            if connection.vendor == "sqlite":
                assert stored[-1] == "content", (table, columns)
            assert "content" in stored


def test_planner_statistics_make_a_hit_list_use_the_primary_key(owner: Any) -> None:
    """The maintenance task's ANALYZE (SQLite): checking a page of hits against the filters
    reads those rows by primary key instead of every item of the owner."""
    from content.models import ItemState
    from content.services.retention import refresh_statistics

    Note.objects.bulk_create([Note(owner=owner, title=f"n{i}", content="x") for i in range(300)])
    ids = list(Note.objects.values_list("pk", flat=True)[:5])
    params = lists.ListParams(views=[ItemState.ACTIVE])
    qs = lists.filtered_items(owner, Note, params).filter(pk__in=ids).values_list("pk", flat=True)
    refresh_statistics()
    sql, query_params = qs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            ("EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN ") + sql,
            query_params,
        )
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    if connection.vendor == "sqlite":
        assert "USING INDEX sqlite_autoindex_content_note_1 (id=?)" in plan, plan
    assert sorted(map(str, qs)) == sorted(map(str, ids))


def test_a_keyword_match_in_the_opening_keeps_its_case_and_line(api: Any, owner: Any) -> None:
    lines = [f"Line {i} of the runbook." for i in range(40)]
    lines[30] = "Then run PG_DUMP --Format=custom on the replica."
    pk = make_note(api, "Runbook", "\n".join(lines))
    response = api.get("/api/search/", {"q": "pg_dump", "mode": "keyword"})
    assert response.status_code == 200
    (result,) = response.json()["results"]
    assert result["id"] == pk
    match = result["match"]
    assert (match["field"], match["start_line"], match["end_line"]) == ("content", 31, 31)
    assert "Then run PG_DUMP --Format=custom" in match["snippet"]
    start, end = match["highlights"][0]
    assert match["snippet"][start:end] == "PG_DUMP"


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 lookup and its budget")
def test_the_sqlite_occurrence_lookup_stops_at_its_budget(owner: Any) -> None:
    """Every note holds the trigrams of "nodesi" ("node", "design") but none the word (nor its
    stem): the trigrams' positions answer it without reading a row. A word under three
    characters has no trigram: every row is GLOB-checked, within the budget exactly; past it,
    "found"."""
    Note.objects.bulk_create(
        [Note(owner=owner, title=f"n{i}", content="node design " * 20) for i in range(1000)]
    )
    assert fulltext.indexed_occurs(owner, Note, "design", budget_ms=5_000) is True
    assert fulltext.indexed_occurs(owner, Note, "nodes", budget_ms=5_000) is True  # its stem
    assert fulltext.indexed_occurs(owner, Note, "nodesi", budget_ms=5_000) is False
    assert fulltext.indexed_occurs(owner, Note, "nodesi", budget_ms=-1) is False  # no scan
    assert fulltext.indexed_occurs(owner, Note, "zq", budget_ms=5_000) is False
    assert fulltext.indexed_occurs(owner, Note, "zq", budget_ms=-1) is True  # already past
    assert Note.objects.count() == 1000  # and the connection still works


def test_a_non_ascii_word_is_checked_for_typos_on_both_databases(api: Any) -> None:
    pk = make_note(api, "Über naïve Bayes", "Ein Klassifikator für Wörter.")
    index()
    response = api.get("/api/search/", {"q": "naïve Wörter", "mode": "hybrid"})
    assert response.status_code == 200, response.content
    assert [r["id"] for r in response.json()["results"]] == [pk]
    response = api.get("/api/search/", {"q": "Klassifikator", "mode": "keyword"})
    assert [r["id"] for r in response.json()["results"]] == [pk]


def _stored_opening(note_id: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            'SELECT s.raw FROM "content_note_search" s JOIN "content_note_search_key" k '
            "ON s.rowid = k.key WHERE k.id = %s",
            [Note._meta.get_field("id").get_db_prep_value(note_id, connection)],
        )
        return cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's trigger (content 0022)")
def test_the_stored_opening_follows_edits_in_it_and_only_those(api: Any, owner: Any) -> None:
    # Two-byte characters: the opening's 20 000 characters are the first 40 000 bytes, and the
    # trigger compares the first 80 000 bytes before it counts characters.
    content = "é" * 30_000
    note_id = make_note(api, "Accents", content)
    url = f"/api/notes/{note_id}/"
    past = content[:25_000] + "zzqq" + content[25_004:]  # byte 50 000: past the opening
    assert api.patch(url, {"content": past}, format="json").status_code == 200
    assert _stored_opening(note_id) == content[:SQLITE_OPENING_CHARS]
    inside = past[:100] + "wwkk" + past[104:]
    assert api.patch(url, {"content": inside}, format="json").status_code == 200
    assert _stored_opening(note_id) == inside[:SQLITE_OPENING_CHARS]
    assert opening_ids(owner, "wwkk") == [note_id]
    far = inside[:29_000] + "Xy" + inside[29_002:]  # past 80 000 bytes: ruled out by bytes alone
    assert api.patch(url, {"content": far}, format="json").status_code == 200
    assert _stored_opening(note_id) == inside[:SQLITE_OPENING_CHARS]
