"""``/api/search/`` and ``/api/search/status/`` (SPEC §16): shape, filters, errors, index life."""

from __future__ import annotations

from typing import Any

import pytest

from content.models import Note
from content.models.search import SearchChunk, SearchDirty
from content.search import embeddings
from content.tests.helpers import assert_error
from content.tests.search_support import _fresh_index, index, make_note, search  # noqa: F401

pytestmark = pytest.mark.django_db


def test_status_counts_pending_then_vectors(api: Any, owner: Any) -> None:
    pk = make_note(api, "Kubernetes node maintenance", "Drain the node.\n\nUpgrade kubelet.")
    assert SearchDirty.objects.filter(item_id=pk).exists()
    body = api.get("/api/search/status/").json()
    assert body == {"pending": 1, "vectors": 0, "model": embeddings.LocalProvider.model}
    index()
    body = api.get("/api/search/status/").json()
    assert body["pending"] == 0
    assert body["vectors"] == 2
    assert SearchChunk.objects.filter(item_id=pk, owner=owner).count() == 2


def test_results_carry_score_and_match_with_lines(api: Any) -> None:
    pk = make_note(
        api, "Ops", "intro\n\nDrain each worker with kubectl drain before upgrades.", ["k8s"]
    )
    index()
    body = search(api, "kubectl", mode="keyword")
    assert body["count"] == 1
    (result,) = body["results"]
    assert result["id"] == pk
    assert result["type"] == "note"
    assert result["title"] == "Ops"
    assert isinstance(result["score"], float)
    match = result["match"]
    assert match["field"] == "content"
    assert match["start_line"] == match["end_line"] == 3
    start, end = match["highlights"][0]
    assert match["snippet"][start:end].lower() == "kubectl"
    assert len(match["snippet"]) <= 300


def test_title_match_has_no_lines_and_tags_match_names_field(api: Any) -> None:
    make_note(api, "Espresso extraction", "Grind fine.", ["coffee"])
    index()
    match = search(api, "espresso", mode="hybrid")["results"][0]["match"]
    assert match["field"] == "title"
    assert match["start_line"] is None
    assert match["highlights"] == [[0, 8]]
    match = search(api, "coffee", mode="keyword")
    assert match["count"] == 0  # keyword is §3.3's q: title, description, content
    assert search(api, "coffee", mode="hybrid")["results"][0]["match"]["field"] == "tags"


def test_filters_apply_to_every_mode(api: Any) -> None:
    make_note(api, "Sourdough recipe", "Feed the starter, bake the loaf.", ["food"])
    tagged = make_note(api, "Rye bread", "Bake rye loaves.", ["baking"])
    archived = make_note(api, "Bread archive", "Old bread notes.", ["baking"])
    assert api.post(f"/api/notes/{archived}/archive/").status_code == 200
    index()
    for mode in ("hybrid", "semantic", "keyword"):
        ids = [r["id"] for r in search(api, "bread", mode=mode, tags="baking")["results"]]
        assert ids == [tagged], (mode, ids)
        ids = [r["id"] for r in search(api, "bread", mode=mode, view="archived")["results"]]
        assert ids == [archived], (mode, ids)
    assert search(api, "bread", mode="semantic", type="bookmark")["results"] == []


def test_limit_offset_and_count(api: Any) -> None:
    for i in range(5):
        make_note(api, f"Bread {i}", "loaf")
    index()
    first = search(api, "bread", mode="hybrid", limit=2)
    second = search(api, "bread", mode="hybrid", limit=2, offset=2)
    assert first["count"] == second["count"] >= 5
    assert not {r["id"] for r in first["results"]} & {r["id"] for r in second["results"]}
    scores = [r["score"] for r in first["results"] + second["results"]]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"q": ""},
        {"q": "x" * 501},
        {"q": "a", "limit": 0},
        {"q": "a", "limit": 51},
        {"q": "a", "mode": "fuzzy"},
    ],
)
def test_bad_parameters_are_validation_errors(api: Any, params: dict[str, Any]) -> None:
    assert_error(api.get("/api/search/", params), 400, "validation_error")


def test_anonymous_gets_401(anon: Any) -> None:
    assert anon.get("/api/search/", {"q": "x"}).status_code == 401
    assert anon.get("/api/search/status/").status_code == 401


def test_stranger_sees_nothing_and_unknown_filter_is_404(api: Any, other_api: Any) -> None:
    make_note(api, "Sourdough recipe", "bake bread")
    index()
    for mode in ("hybrid", "semantic", "keyword"):
        assert search(other_api, "sourdough bread", mode=mode) == {"results": [], "count": 0}
    assert other_api.get("/api/search/status/").json()["pending"] == 0
    response = api.get(
        "/api/search/", {"q": "x", "filter_id": "0190a000-0000-7000-8000-000000000000"}
    )
    assert_error(response, 404, "not_found")


def test_provider_down_degrades_hybrid_and_refuses_semantic(api: Any, settings: Any) -> None:
    pk = make_note(api, "Sourdough recipe", "bake bread")
    index()
    settings.TIDDLY_EMBEDDINGS = "off"
    body = search(api, "sourdough", mode="hybrid")
    assert body["degraded"] is True
    assert [r["id"] for r in body["results"]] == [pk]
    assert_error(
        api.get("/api/search/", {"q": "sourdough", "mode": "semantic"}), 503, "search_unavailable"
    )
    # a write still succeeds and stays pending while the provider is off
    second = make_note(api, "Rye", "more bread")
    assert Note.objects.filter(pk=second).exists()
    from content.search.indexing import index_pending

    assert index_pending().unavailable
    assert SearchDirty.objects.filter(item_id=second).exists()


def test_edit_replaces_vectors_and_permanent_delete_leaves_none(api: Any) -> None:
    pk = make_note(api, "Kubernetes", "short")
    index()
    before = set(SearchChunk.objects.filter(item_id=pk).values_list("id", flat=True))
    header = SearchChunk.objects.get(item_id=pk, field="header").pk
    long = "\n\n".join("paragraph " * 150 for _ in range(4))
    assert api.patch(f"/api/notes/{pk}/", {"content": long}, format="json").status_code == 200
    index()
    after = set(SearchChunk.objects.filter(item_id=pk).values_list("id", flat=True))
    assert after
    assert before & after == {header}  # the unchanged header keeps its row; "short" is gone
    assert len(after) > 2
    assert api.delete(f"/api/notes/{pk}/").status_code == 204  # to the trash: vectors stay
    assert SearchChunk.objects.filter(item_id=pk).exists()
    assert api.delete(f"/api/notes/{pk}/", QUERY_STRING="permanent=true").status_code == 204
    assert not SearchChunk.objects.filter(item_id=pk).exists()
    assert not SearchDirty.objects.filter(item_id=pk).exists()


def test_a_misspelt_word_finds_its_near_word(api: Any) -> None:
    pk = make_note(api, "Kubernetes upgrade checklist", "drain, upgrade, uncordon")
    make_note(api, "Sourdough", "bread")
    index()
    for mode in ("keyword", "hybrid"):
        assert search(api, "kubernets", mode=mode)["results"][0]["id"] == pk, mode
    assert search(api, "kubernets upgrade", mode="keyword")["count"] == 1
    assert search(api, "zzzzzzzz", mode="keyword")["count"] == 0
