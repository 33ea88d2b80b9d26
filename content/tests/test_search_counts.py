"""``/api/search/`` counts and pages (SPEC §16): the semantic leg keeps the best 100 items that
pass the filters, and ``count`` is exactly what the query can page through."""

from __future__ import annotations

from typing import Any

import pytest

from content.history import Actor
from content.models import Note
from content.search import ranking as search_queries
from content.services import create_item
from content.tests.search_support import _fresh_index, index, search  # noqa: F401

pytestmark = pytest.mark.django_db

TOPICS = ["bread baking", "tax returns", "guitar chords", "tomato garden", "marathon running"]


def _notes(
    owner: Any, n: int, tags: list[str] | None = None, topic: str | None = None
) -> list[str]:
    ids = []
    for i in range(n):
        subject = topic or TOPICS[i % len(TOPICS)]
        item = create_item(
            owner=owner,
            model=Note,
            data={"title": f"{subject} {i}", "content": f"Notes on {subject}.", "tags": tags or []},
            actor=Actor(source="test"),
        )
        ids.append(str(item.pk))
    return ids


def test_semantic_keeps_the_best_100_and_pages_through_exactly_them(
    api: Any, owner: Any, settings: Any
) -> None:
    settings.TIDDLY_SEARCH_MIN_SCORE = -1  # no relevance floor: every note is ranked
    _notes(owner, 130)
    index()
    first = search(api, "baking sourdough loaves", mode="semantic", limit=50)
    assert first["count"] == search_queries.SEMANTIC_DEPTH == 100
    ids = [r["id"] for r in first["results"]]
    for offset in (50, 90):
        page = search(api, "baking sourdough loaves", mode="semantic", limit=50, offset=offset)
        assert page["count"] == 100
        assert len(page["results"]) == 100 - offset if offset == 90 else 50
        ids += [r["id"] for r in page["results"]] if offset == 50 else []
    assert len(set(ids)) == 100  # no item twice across the pages
    scores = [r["score"] for r in first["results"]]
    assert scores == sorted(scores, reverse=True)
    past = search(api, "baking sourdough loaves", mode="semantic", limit=50, offset=100)
    assert past == {"results": [], "count": 100}
    # hybrid: the union of the keyword leg (every word must match) and the semantic leg
    keyword = search(api, "bread baking", mode="keyword", limit=50)
    assert keyword["count"] == 26  # notes 0, 5, …, 125
    meaning = [
        r["id"]
        for offset in (0, 50)
        for r in search(api, "bread baking", mode="semantic", limit=50, offset=offset)["results"]
    ]
    union = {r["id"] for r in keyword["results"]} | set(meaning)
    hybrid = [
        r["id"]
        for offset in (0, 50, 100)
        for r in search(api, "bread baking", mode="hybrid", limit=50, offset=offset)["results"]
    ]
    assert search(api, "bread baking", mode="hybrid")["count"] == len(union) == len(hybrid)
    assert set(hybrid) == union


def test_a_selective_filter_still_gets_its_best_items_from_far_down_the_ranking(
    api: Any, owner: Any, monkeypatch: Any, settings: Any
) -> None:
    settings.TIDDLY_SEARCH_MIN_SCORE = -1  # no relevance floor: every note is ranked
    monkeypatch.setattr(search_queries, "CANDIDATES", 5)
    _notes(owner, 20, topic="bread baking")
    rare = _notes(owner, 3, tags=["rare"], topic="tax returns")
    index()
    body = search(api, "baking sourdough loaves", mode="semantic", tags="rare")
    assert body["count"] == 3
    assert sorted(r["id"] for r in body["results"]) == sorted(rare)
    unfiltered = search(api, "baking sourdough loaves", mode="semantic", limit=50)
    assert unfiltered["count"] == 23
    assert {r["id"] for r in unfiltered["results"][-3:]} == set(rare)  # they rank last
