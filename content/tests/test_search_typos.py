"""Typo tolerance in content (SPEC §16): on PostgreSQL a misspelt word that occurs nowhere is
replaced by its near word from the content too (pg_trgm word similarity on a GIN trigram index);
SQLite keeps the titles/descriptions/tags vocabulary only."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from content.tests.search_support import _fresh_index, index, make_note, search  # noqa: F401

pytestmark = pytest.mark.django_db
on_postgres = connection.vendor == "postgresql"
postgres_only = pytest.mark.skipif(not on_postgres, reason="pg_trgm is PostgreSQL's")


def test_a_misspelt_content_word_is_found(api: Any, other_api: Any) -> None:
    pk = make_note(api, "Ops", "Our kubernetes upgrade checklist: drain nodes first.")
    make_note(api, "Sourdough", "Feed the starter.")
    make_note(other_api, "Theirs", "Another kubernetes note.")
    index()
    for mode in ("keyword", "hybrid"):
        found = search(api, "kubernets", mode=mode)
        ids = [r["id"] for r in found["results"]]
        # Both databases stem "kubernets" as "kubernetes" (round 4: SQLite's word index too).
        assert ids[0] == pk, mode
    keyword = search(api, "kubernets checklist", mode="keyword")
    assert keyword["count"] == 1  # the other words still must match
    assert search(api, "kubernets sourdough", mode="keyword")["count"] == 0


@postgres_only
def test_a_strangers_content_lends_no_words(api: Any, other_api: Any) -> None:
    make_note(api, "Ops", "Nothing about clusters here.")
    make_note(other_api, "Theirs", "kubernetes kubernetes")
    index()
    assert search(api, "kubernets", mode="keyword")["count"] == 0
    assert search(other_api, "kubernets", mode="keyword")["count"] == 1


@postgres_only
def test_the_trigram_index_serves_the_near_word_lookup() -> None:
    from content.dbops import OPENING_COLUMN

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename FROM pg_indexes WHERE indexname LIKE %s ORDER BY 1",
            ["%_content_trgm"],
        )
        assert [t for (t,) in cursor.fetchall()] == [
            "content_bookmark",
            "content_note",
            "prompts_prompt",
        ]
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            f"EXPLAIN SELECT id FROM content_note WHERE {OPENING_COLUMN} %%> %s",
            ["kubernets"],
        )
        near_plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute(
            f"EXPLAIN SELECT id FROM content_note WHERE {OPENING_COLUMN} LIKE %s", ["%kubern%"]
        )
        like_plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "content_note_content_trgm" in near_plan
    assert "content_note_content_trgm" in like_plan  # hybrid's keyword leg


@postgres_only
def test_the_content_word_lookup_is_cancelled_at_its_budget(owner: Any, monkeypatch: Any) -> None:
    from content.models import Note
    from content.search import typos as ranked

    finished = []

    def slow(cursor: Any, *args: Any) -> None:
        cursor.execute("SELECT pg_sleep(5)")
        finished.append(True)

    monkeypatch.setattr(ranked, "_near_content_words", slow)

    assert ranked._content_words(owner, ["note"], "kubernets", 50) == set()
    assert finished == []  # cancelled, not waited for
    # The transaction is usable afterwards: the cancelled statement was rolled back alone.
    assert Note.objects.filter(owner=owner).count() == 0


@postgres_only
def test_a_word_lookup_past_its_budget_counts_as_found_and_leaves_no_timeout(
    owner: Any, monkeypatch: Any
) -> None:
    """Hybrid's lookup of whether a word occurs (PostgreSQL) is cancelled at OCCURS_MS; the
    statement timeout it set is put back, so the request's later statements are not cut."""
    from django.db.models import Q

    from content.models import Note
    from content.search import typos

    Note.objects.create(owner=owner, title="A note", content="Some words.")
    monkeypatch.setattr(typos, "_parts", lambda condition: [Q(pk__in=_sleeping())])
    assert typos._occurs(owner, ["note"], "absentword", budget_ms=50) is True
    monkeypatch.setattr(typos, "_parts", lambda condition: [Q(pk=None)])
    assert typos._occurs(owner, ["note"], "absentword", budget_ms=5_000) is False
    with connection.cursor() as cursor:  # within budget: the timeout is the caller's again
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"
        cursor.execute("SELECT pg_sleep(0.1)")


def _sleeping() -> Any:
    from django.db.models.expressions import RawSQL

    return RawSQL("SELECT id FROM content_note WHERE pg_sleep(5) IS NOT NULL", [])


def test_a_long_query_checks_a_bounded_number_of_words_on_indexes_only(
    api: Any, owner: Any, monkeypatch: Any
) -> None:
    """A 500-character ``q`` of missing words (SPEC §16, round 4): at most TYPO_WORDS lookups,
    none a scan of whole contents, all within TYPO_MS together; in keyword mode too."""
    from django.test.utils import CaptureQueriesContext

    from content.search import typos

    make_note(api, "Ops", "kubernetes upgrade checklist " + "filler words here " * 2_000)
    words = [f"zq{chr(97 + i // 26)}{chr(97 + i % 26)}xyw" for i in range(60)]
    q = " ".join(words)[:500]
    checked = []
    occurs = typos._occurs

    def counting(*args: Any, **kwargs: Any) -> bool:
        checked.append(args[2])
        return occurs(*args, **kwargs)

    monkeypatch.setattr(typos, "_occurs", counting)
    for mode in ("keyword", "hybrid"):
        checked.clear()
        with CaptureQueriesContext(connection) as queries:
            response = api.get("/api/search/", {"q": q, "mode": mode})
        assert response.status_code == 200
        assert response.json()["count"] == 0
        assert 1 <= len(checked) <= typos.TYPO_WORDS, mode
        scans = [x["sql"] for x in queries if '."content"' in x["sql"] and "LIKE" in x["sql"]]
        assert scans == [], mode
    # Past the shared budget no word is looked up at all.
    monkeypatch.setattr(typos, "TYPO_MS", 0)
    checked.clear()
    assert typos.tolerant_query(owner, ["note"], q) == q
    assert checked == []
