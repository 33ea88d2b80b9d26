"""Finding by meaning over MCP (SPEC §16): ``mode`` on search_items/search_prompts, ``match``
lines that feed get_item's partial read, the provider-down error, and find_related."""

from __future__ import annotations

from typing import Any

import pytest

from content.history import Actor
from content.models.search import SearchDirty
from content.search import semantic
from content.services import relationships
from content.services.relationships import End
from content.tests.search_corpus import NOTES
from mcp_bridge.tests.conftest import CONTENT, Mcp, create
from tiddly.models import ApiToken
from tiddly.tasks import run_tasks


@pytest.fixture(autouse=True)
def _local_model(settings: Any, monkeypatch: Any) -> None:
    settings.TIDDLY_EMBEDDINGS = "local"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    semantic.clear()  # owner ids repeat between tests; the process cache must not


def index() -> None:
    run_tasks()
    assert not SearchDirty.objects.exists()


@pytest.fixture
def corpus(mcp_owner: Any) -> dict[str, Any]:
    items = {
        key: create(mcp_owner, "note", title=title, content=content)
        for key, (title, content) in NOTES.items()
    }
    index()
    return items


PARAPHRASE = "checklist for upgrading the cluster servers"  # no word of the k8s note


def test_keyword_is_the_default_and_carries_no_match_or_score(
    content_mcp: Mcp, corpus: dict[str, Any]
) -> None:
    assert content_mcp.ok("search_items", query=PARAPHRASE)["total"] == 0
    page = content_mcp.ok("search_items", query="kubectl")
    assert [i["id"] for i in page["items"]] == [str(corpus["k8s"].pk)]
    assert "match" not in page["items"][0]
    assert "score" not in page["items"][0]
    assert "degraded" not in page
    assert page == content_mcp.ok("search_items", query="kubectl", mode="keyword")


def test_keyword_search_items_finds_every_word_wherever_it_is(
    content_mcp: Mcp, mcp_owner: Any
) -> None:
    """An agent's first search (SPEC §3.3, round 4): "backup restore" finds the items holding
    both words, on SQLite as on PostgreSQL, however far apart they are."""
    lines = "".join(f"step {i}: check the logs\n" for i in range(6_000))
    note = create(mcp_owner, "note", title="Backup runbook", content=lines + "Then restore it.")
    mark = create(mcp_owner, "bookmark", url="https://e.com/", title="How to restore a BACKUP")
    create(mcp_owner, "note", title="Backup only", content="nothing else")
    page = content_mcp.ok("search_items", query="backup restore")
    assert page["total"] == 2
    assert {i["id"] for i in page["items"]} == {str(note.pk), str(mark.pk)}
    assert content_mcp.ok("search_items", query='"restore a backup"')["total"] == 1


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_meaning_modes_find_a_paraphrase_with_score_and_match(
    content_mcp: Mcp, corpus: dict[str, Any], mode: str
) -> None:
    page = content_mcp.ok("search_items", query=PARAPHRASE, mode=mode, limit=3, min_score=-1)
    assert page["items"][0]["id"] == str(corpus["k8s"].pk)
    assert page["total"] == len(NOTES)  # min_score=-1: every note passes; all are ranked
    assert page["has_more"] is True
    first = page["items"][0]
    assert first["type"] == "note"
    assert first["title"] == "Kubernetes node maintenance"
    assert first["content_length"] == len(NOTES["k8s"][1])
    assert "content" not in first
    assert isinstance(first["score"], float)
    scores = [i["score"] for i in page["items"]]
    assert scores == sorted(scores, reverse=True)
    assert set(first["match"]) == {"field", "start_line", "end_line", "snippet", "highlights"}
    # the same ranking as /api/search/ (one query function)
    rest = content_mcp.ok("search_items", query=PARAPHRASE, mode=mode, limit=3, offset=3)
    assert not {i["id"] for i in rest["items"]} & {i["id"] for i in page["items"]}


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_match_lines_feed_get_items_partial_read(
    content_mcp: Mcp, mcp_owner: Any, mode: str
) -> None:
    filler = [f"Line {n}: notes about the quarterly budget and spreadsheets." for n in range(400)]
    passage = [
        "Kubernetes upgrade: drain each worker node with kubectl drain, cordon it,",
        "upgrade kubelet and the container runtime, then uncordon the node and check",
        "that the pods reschedule and the control plane stays healthy.",
    ] * 12  # ~2 500 characters: at least one chunk is all passage
    lines = [*filler[:300], "", *passage, "", *filler[300:]]  # passage: lines 302-337
    note = create(mcp_owner, "note", title="Handbook", content="\n".join(lines))
    create(mcp_owner, "note", title="Budget", content="\n".join(filler[:50]))
    index()
    query = "kubernetes worker node upgrade with kubectl drain"
    hit = content_mcp.ok("search_items", query=query, mode=mode)
    first = hit["items"][0]
    assert first["id"] == str(note.pk)
    match = first["match"]
    assert match["field"] == "content"
    # The matching chunk lies on the passage (lines 302-337); chunk cuts are content-defined
    # (stable under edits, SPEC §16), so it may begin a few filler lines before it.
    assert match["start_line"] <= 302 <= match["end_line"] <= 338
    assert match["start_line"] >= 290
    assert match["end_line"] - match["start_line"] < 60  # a chunk, not the whole note
    read = content_mcp.ok(
        "get_item",
        id=str(note.pk),
        type="note",
        start_line=match["start_line"],
        end_line=match["end_line"],
    )
    assert passage[0] in read["content"]
    assert read["content_metadata"]["start_line"] == match["start_line"]


def test_filters_apply_with_a_mode(content_mcp: Mcp, mcp_owner: Any) -> None:
    create(mcp_owner, "note", title="Sourdough recipe", content="bake the loaf", tags=["food"])
    tagged = create(mcp_owner, "note", title="Rye bread", content="bake rye", tags=["baking"])
    bookmark = create(
        mcp_owner, "bookmark", url="https://example.com/b", title="Bread site", content="loaves"
    )
    index()
    page = content_mcp.ok("search_items", query="bread", mode="semantic", tags=["baking"])
    assert [i["id"] for i in page["items"]] == [str(tagged.pk)]
    assert page["total"] == 1
    page = content_mcp.ok("search_items", query="bread", mode="hybrid", type="bookmark")
    assert [i["id"] for i in page["items"]] == [str(bookmark.pk)]
    assert page["items"][0]["url"] == "https://example.com/b"


def test_a_stranger_finds_none_of_the_owners_items(
    other_content_mcp: Mcp, corpus: dict[str, Any]
) -> None:
    page = other_content_mcp.ok("search_items", query=PARAPHRASE, mode="semantic")
    assert page == {"items": [], "total": 0, "has_more": False}


def test_provider_off_semantic_is_search_unavailable_and_hybrid_degrades(
    content_mcp: Mcp, corpus: dict[str, Any], settings: Any
) -> None:
    settings.TIDDLY_EMBEDDINGS = "off"
    body = content_mcp.error("search_items", query="kubectl", mode="semantic")
    assert body["error"] == "search_unavailable"
    assert "mode=keyword" in body["message"]
    page = content_mcp.ok("search_items", query="kubectl", mode="hybrid")
    assert page["degraded"] is True
    assert [i["id"] for i in page["items"]] == [str(corpus["k8s"].pk)]
    assert page["items"][0]["match"]["field"] == "content"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"mode": "semantic"}, "query"),
        ({"query": "x", "mode": "hybrid", "sort_by": "title"}, "sort_by"),
    ],
)
def test_a_mode_needs_a_query_and_takes_no_sort(
    content_mcp: Mcp, arguments: dict[str, Any], field: str
) -> None:
    body = content_mcp.error("search_items", **arguments)
    assert body["error"] == "validation_error"
    assert field in body["fields"]


def test_an_unknown_mode_is_a_validation_error(content_mcp: Mcp) -> None:
    body = content_mcp.error("search_items", query="x", mode="fuzzy")
    assert body["error"] == "validation_error"


def test_search_prompts_by_meaning(prompt_mcp: Mcp, mcp_owner: Any) -> None:
    target = create(
        mcp_owner,
        "prompt",
        name="meeting-actions",
        title="Meeting minutes to action items",
        content="Read these meeting minutes and list each action item with its owner.",
    )
    create(mcp_owner, "prompt", name="haiku", title="Write a haiku", content="A haiku on spring")
    create(mcp_owner, "note", title="Meeting minutes", content="the note is not a prompt")
    index()
    query = "turn what was decided in a discussion into a todo list"
    assert prompt_mcp.ok("search_prompts", query=query)["total"] == 0
    page = prompt_mcp.ok("search_prompts", query=query, mode="hybrid")
    assert page["items"][0]["name"] == target.name
    assert page["items"][0]["arguments"] == []
    assert {i["type"] for i in page["items"]} == {"prompt"}
    assert isinstance(page["items"][0]["score"], float)
    assert page["items"][0]["match"]["field"] in {"title", "name", "description", "content"}
    keyword = prompt_mcp.ok("search_prompts", query="haiku")
    assert "match" not in keyword["items"][0]


# --- find_related -------------------------------------------------------------------------------


def test_find_related_lists_neighbours_with_linked_flag(
    content_mcp: Mcp, corpus: dict[str, Any], mcp_owner: Any, api_for: Any
) -> None:
    rye = create(
        mcp_owner, "note", title="Rye bread", content="Bake rye loaves with a sour starter."
    )
    index()
    bread = corpus["bread"]
    relationships.create_link(
        owner=mcp_owner,
        source=End.parse("note", str(bread.pk), "source_id"),
        target=End.parse("note", str(corpus["cat"].pk), "target_id"),
        description=None,
        actor=Actor(source="test"),
    )
    body = content_mcp.ok("find_related", id=str(bread.pk), type="note", limit=50)
    results = body["results"]
    assert results[0] == {
        "type": "note",
        "id": str(rye.pk),
        "title": "Rye bread",
        "score": results[0]["score"],
        "linked": False,
    }
    assert str(bread.pk) not in [r["id"] for r in results]
    assert {r["id"]: r["linked"] for r in results}[str(corpus["cat"].pk)] is True
    assert (
        len(content_mcp.ok("find_related", id=str(bread.pk), type="note", limit=2)["results"]) == 2
    )
    rest = api_for(mcp_owner).get(f"/api/notes/{bread.pk}/related/", {"limit": 50})
    assert rest.json() == body  # the same service as REST


def test_find_related_unknown_or_foreign_is_not_found(
    content_mcp: Mcp, other_content_mcp: Mcp, corpus: dict[str, Any]
) -> None:
    pk = str(corpus["bread"].pk)
    assert other_content_mcp.error("find_related", id=pk, type="note")["error"] == "not_found"
    assert content_mcp.error("find_related", id=pk, type="bookmark")["error"] == "not_found"
    unknown = "00000000-0000-0000-0000-000000000000"
    assert content_mcp.error("find_related", id=unknown, type="note")["error"] == "not_found"
    assert content_mcp.error("find_related", id=pk, type="note", limit=51)["error"] == (
        "validation_error"
    )


def test_find_related_needs_content_read_and_hides_unreadable_types(
    corpus: dict[str, Any], mcp_owner: Any
) -> None:
    create(mcp_owner, "prompt", name="bread-baker", title="Sourdough bread baking", content="Bake")
    index()
    pk = str(corpus["bread"].pk)

    def scoped(scopes: str) -> Mcp:
        return Mcp(CONTENT, ApiToken.issue(owner=mcp_owner, name="s", scopes=scopes)[1])

    content_only = scoped("content:read").ok("find_related", id=pk, type="note", limit=50)
    assert {r["type"] for r in content_only["results"]} == {"note"}
    both = scoped("content:read prompts:read").ok("find_related", id=pk, type="note", limit=50)
    assert "prompt" in {r["type"] for r in both["results"]}
    body = scoped("prompts:read").error("find_related", id=pk, type="note")
    assert body["error"] == "forbidden"
