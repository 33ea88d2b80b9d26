"""Search quality on a small corpus of paraphrases (SPEC §16): recall@3 per mode."""

from __future__ import annotations

from typing import Any

import pytest

from content.tests.search_corpus import NOTES, QUERIES
from content.tests.search_support import _fresh_index, index, make_note, search  # noqa: F401

pytestmark = pytest.mark.django_db


def recall_at_3(api: Any, ids: dict[str, str], mode: str) -> float:
    hits = 0
    for query, target in QUERIES:
        top = [r["id"] for r in search(api, query, mode=mode, limit=3)["results"]]
        hits += ids[target] in top
    return hits / len(QUERIES)


@pytest.fixture
def corpus(api: Any) -> dict[str, str]:
    ids = {key: make_note(api, title, content) for key, (title, content) in NOTES.items()}
    index()
    return ids


def test_paraphrases_are_found_by_meaning_not_by_keyword(api: Any, corpus: dict[str, str]) -> None:
    recall = {mode: recall_at_3(api, corpus, mode) for mode in ("semantic", "hybrid", "keyword")}
    print("recall@3", recall)
    assert recall["semantic"] >= 0.7, recall
    assert recall["hybrid"] >= 0.7, recall
    assert recall["keyword"] <= 0.2, recall


def test_exact_names_and_codes_rank_first_in_hybrid(api: Any, corpus: dict[str, str]) -> None:
    code = make_note(api, "Incident ZX-4471", "The pager fired for ZX-4471 at night.")
    index()
    assert search(api, "ZX-4471", mode="hybrid")["results"][0]["id"] == code
    assert search(api, "pg_dump", mode="hybrid")["results"][0]["id"] == corpus["postgres"]


def test_a_passage_deep_in_a_long_note_is_located_by_match_lines(api: Any) -> None:
    filler = [f"Entry {i}: routine log line about disk usage and cron output." for i in range(3000)]
    passage = [
        "",
        "## Sourdough",
        "Feed the starter the night before and mix flour, water and salt into a dough.",
        "Fold the dough every half hour, let it rise overnight in the fridge.",
        "Shape the loaf, score the crust and bake it in a hot dutch oven.",
        "Rye flour gives a sour crumb; whole wheat needs more water.",
        "Cool the bread on a rack before slicing it.",
        "",
    ]
    lines = filler[:2000] + passage + filler[2000:]
    pk = make_note(api, "Server log", "\n".join(lines))
    index()
    # min_score=-1: the passage's chunk is mostly log lines, so its cosine is far below the
    # relevance floor; this test is about where the match points.
    result = search(api, "baking loaves at home", mode="semantic", min_score=-1)["results"][0]
    assert result["id"] == pk
    match = result["match"]
    assert match["field"] == "content"
    assert match["start_line"] <= 2003 <= match["end_line"]
    assert match["end_line"] - match["start_line"] < 60
    window = api.get(
        f"/api/notes/{pk}/", {"start_line": match["start_line"], "end_line": match["end_line"]}
    )
    assert "dutch oven" in window.json()["content"]
