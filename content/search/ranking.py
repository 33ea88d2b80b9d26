"""``/api/search/``: keyword, semantic and hybrid rankings with match locations (SPEC §16).

The keyword leg is §3.3's ``q`` list (every query word must match), ranked by relevance; the
semantic leg ranks the owner's items passing the same filters by their best chunk's cosine (its
best ``SEMANTIC_DEPTH``); ``hybrid`` fuses both by reciprocal rank fusion (k = 60). ``match``
points at the best place: a keyword hit where the query's words occur, else the best chunk.

``count`` is what the query can page through, so ``offset + len(results) < count`` is an honest
"more follow": at most ``SEMANTIC_DEPTH`` (100) for ``semantic``, at most ``KEYWORD_DEPTH`` for
``keyword``, the union of both legs for ``hybrid`` (whose keyword leg keeps its best
``HYBRID_KEYWORD_DEPTH``: past rank 300 its reciprocal rank, 1/360, is below any of the meaning
leg's 100).
"""

from __future__ import annotations

import itertools
import logging
import re
from dataclasses import dataclass, replace
from typing import Any, cast

from django.conf import settings
from django.db.models import Case, F, TextField, Value, When
from django.db.models.expressions import RawSQL
from django.db.models.functions import Greatest, Length, Replace, StrIndex, Substr

from content import item_types
from content.dbops import OPENING_COLUMN
from content.errors import SearchUnavailable
from content.models import Item, ItemState
from content.models.search import SearchChunk, SearchDirty
from content.queries import fulltext
from content.queries import lists as queries
from content.search import semantic, typos
from content.search.embeddings import LocalProvider, ProviderUnavailable, provider, query_provider
from content.search.semantic import ChunkHit
from content.shapes import SearchMatch

RRF_K = 60
KEYWORD_DEPTH = 1_000
HYBRID_KEYWORD_DEPTH = queries.HYBRID_CONTENT_HITS  # 300
SEMANTIC_DEPTH = 100
CANDIDATES = 2_000  # the most semantic items checked against the filters in one query per type
SNIPPET = 300
_WORDS = re.compile(r"\w+")

logger = logging.getLogger(__name__)


@dataclass
class Ranked:
    item_type: str
    item_id: Any
    score: float
    hit: ChunkHit | None = None
    keyword: bool = False


def query_words(q: str) -> list[str]:
    return list(dict.fromkeys(w.lower() for w in _WORDS.findall(q)))


def search(
    owner: Any,
    types: list[str],
    params: queries.ListParams,
    *,
    mode: str,
    min_score: float | None = None,
) -> dict[str, Any]:
    """The ranked page: ``{"results", "count"}`` (+ ``"degraded": true`` for a fallback)."""
    found = ranked_page(owner, types, params, mode=mode, min_score=min_score)
    out: dict[str, Any] = {
        "results": results(owner, found.page, found.words, whole_content=mode == "keyword"),
        "count": found.count,
    }
    if found.degraded:
        out["degraded"] = True
    return out


@dataclass
class Page:
    page: list[Ranked]
    count: int
    degraded: bool
    words: list[str]  # what match locations look for: the query's words and their near words


def ranked_page(
    owner: Any,
    types: list[str],
    params: queries.ListParams,
    *,
    mode: str,
    min_score: float | None = None,
) -> Page:
    """The page of ``params`` (offset, limit) of the ranking of ``mode``; ``count`` is how many
    results the query can page through (keyword: at most ``KEYWORD_DEPTH``; semantic: at most
    ``SEMANTIC_DEPTH``; hybrid: the union of both legs)."""
    degraded = False
    keyword: list[Ranked] = []
    meaning: list[Ranked] = []
    words = query_words(params.q)
    types = _held(owner, types)
    if mode in ("keyword", "hybrid"):
        # Both legs find the same items, on indexes, over whole contents (round 4); on PostgreSQL
        # hybrid's ranks them by the short fields' small vector (content.queries.lists._search).
        leg = replace(params, q_whole_content=mode == "keyword", q_deep_first=True)
        depth = KEYWORD_DEPTH if mode == "keyword" else HYBRID_KEYWORD_DEPTH
        keyword = keyword_ranking(owner, types, leg, depth=depth) if _plain(params.q) else []
        if not keyword:
            # A plain query with hits has every word in some item: no typo to look for (the
            # checks cost a few statements a word). Without hits, or with OR / -word / phrases,
            # the words are checked and the leg runs again when one was replaced.
            tolerant = typos.tolerant_query(owner, types, params.q, whole_content=mode == "keyword")
            words = list(dict.fromkeys([*query_words(tolerant), *words]))
            if tolerant != params.q or not _plain(params.q):
                keyword = keyword_ranking(owner, types, replace(leg, q=tolerant), depth=depth)
    if mode in ("semantic", "hybrid"):
        try:
            meaning = semantic_ranking(owner, types, params, min_score=min_score)
        except ProviderUnavailable as exc:
            if mode == "semantic":
                raise SearchUnavailable(
                    f"Search by meaning is unavailable: {exc}. Use mode=keyword or retry later."
                ) from exc
            degraded = True
    if mode == "keyword" or degraded:
        ranked = keyword
    elif mode == "semantic":
        ranked = meaning
    else:
        ranked = fuse(keyword, meaning)
    page = ranked[params.offset : params.offset + params.limit]
    return Page(page=page, count=len(ranked), degraded=degraded, words=words)


def _plain(q: str) -> bool:
    """Words only: no ``OR``, ``-word`` or ``"phrase"`` (where a hit does not mean that every
    word occurs)."""
    return '"' not in q and not re.search(r"(^|\s)-|\bOR\b", q)


@dataclass
class Listed:
    items: list[tuple[Item, float, SearchMatch]]
    count: int
    degraded: bool


def listed(
    owner: Any,
    types: list[str],
    params: queries.ListParams,
    *,
    mode: str,
    min_score: float | None = None,
) -> Listed:
    """The ranked page as list entries (MCP ``search_items``/``search_prompts`` with a mode):
    each item loaded as the lists load it (no content; its length and head, tags) with its
    ``score`` and ``match``."""
    found = ranked_page(owner, types, params, mode=mode, min_score=min_score)
    rows = {
        (r["type"], r["id"]): r
        for r in results(owner, found.page, found.words, whole_content=mode == "keyword")
    }
    items = queries.load_rows(owner, [{"kind": r.item_type, "id": r.item_id} for r in found.page])
    out = []
    for item in items:
        row = rows.get((item.type_name, str(item.pk)))
        if row is not None:
            out.append((item, row["score"], cast(SearchMatch, row["match"])))
    return Listed(items=out, count=found.count, degraded=found.degraded)


def _held(owner: Any, types: list[str]) -> list[str]:
    """The types of which the owner has any item (one indexed EXISTS each): a type with none
    costs each leg nothing."""
    return [t for t in types if queries.owned(owner, item_types.model_for(t)).exists()]


def keyword_ranking(
    owner: Any, types: list[str], params: queries.ListParams, *, depth: int = KEYWORD_DEPTH
) -> list[Ranked]:
    """§3.3's ``q`` ranking of ``params.q`` (already made typo-tolerant by the caller), its best
    ``depth``."""
    with queries.bitmap_scans():
        union = queries.union_rows(
            owner, types, replace(params, sort_by="relevance", sort_order="desc"), ranking=True
        )
        if union is None:
            return []
        rows = union.order_by(*queries.ordering(replace(params, sort_by="relevance")))
        ranked = [(r["kind"], r["id"], r["rank"]) for r in rows[:depth]]
    n = len(ranked)
    # Relevance on SQLite is 0 for every hit: the score falls back to the rank position.
    return [
        Ranked(kind, pk, float(rank) if rank else (n - i) / max(n, 1), keyword=True)
        for i, (kind, pk, rank) in enumerate(ranked)
    ]


#: Cosines below which an item is not a match (its best chunk's), per model (SPEC §16). The
#: local model, measured on the quality corpus (README "Where results end"): paraphrases meet
#: their note at 0.16-0.52 (5th percentile 0.20), queries of nonsense words meet the nearest item
#: at 0.04-0.31 (median 0.14, 95th percentile 0.21). Another model's cosines are not comparable:
#: no floor until ``TIDDLY_SEARCH_MIN_SCORE`` sets one.
RELEVANCE_FLOORS = {LocalProvider.model: 0.18}


def relevance_floor(model: str) -> float:
    configured = settings.TIDDLY_SEARCH_MIN_SCORE
    return configured if configured is not None else RELEVANCE_FLOORS.get(model, -1.0)


def semantic_ranking(
    owner: Any, types: list[str], params: queries.ListParams, *, min_score: float | None = None
) -> list[Ranked]:
    """The best ``SEMANTIC_DEPTH`` items passing the filters whose best chunk reaches the
    relevance floor (``min_score`` overrides it). The filters choose what is ranked: tags, a
    saved filter or views other than active pass their ids to the index, which then ranks every
    row of those items (and of ``types``) exactly when they hold fewer than its exact limit."""
    embedder = query_provider()
    vector = embedder.embed([params.q])[0]
    floor = relevance_floor(embedder.model) if min_score is None else min_score
    filters = replace(params, q="")
    keys = None
    if filters.tags or filters.filter_groups or list(filters.views) != [ItemState.ACTIVE]:
        keys = _passing_ids(owner, types, filters)
    ranked = semantic.ranking(owner.pk, embedder.model, vector, types=set(types), keys=keys)
    hits = itertools.takewhile(lambda h: h.score >= floor, ranked)
    if keys is not None:
        kept = list(itertools.islice(hits, SEMANTIC_DEPTH))
    else:
        # Only the active view: nearly every candidate passes, so check them in small growing
        # batches (200, 400, …) instead of sending thousands of ids.
        kept = []
        size = 2 * SEMANTIC_DEPTH
        while len(kept) < SEMANTIC_DEPTH:
            batch = list(itertools.islice(hits, size))
            if not batch:
                break
            allowed = _passing(owner, batch, filters)
            kept.extend(h for h in batch if (h.item_type, h.item_id) in allowed)
            size = min(size * 2, CANDIDATES)
    return [Ranked(h.item_type, h.item_id, h.score, hit=h) for h in kept[:SEMANTIC_DEPTH]]


def _passing_ids(owner: Any, types: list[str], params: queries.ListParams) -> set[tuple[str, Any]]:
    """Every item of ``types`` passing the list filters (one id query per type)."""
    allowed: set[tuple[str, Any]] = set()
    for type_name in types:
        if params.includes(type_name):
            model = item_types.model_for(type_name)
            ids = queries.filtered_items(owner, model, params).values_list("pk", flat=True)
            allowed.update((type_name, pk) for pk in ids)
    return allowed


def _passing(owner: Any, hits: list[ChunkHit], params: queries.ListParams) -> set[tuple[str, Any]]:
    """Which of the hit items pass the list filters (views, tags, saved filter)."""
    by_type: dict[str, list[Any]] = {}
    for h in hits:
        by_type.setdefault(h.item_type, []).append(h.item_id)
    allowed: set[tuple[str, Any]] = set()
    for type_name, ids in by_type.items():
        if not params.includes(type_name):
            continue
        model = item_types.model_for(type_name)
        qs = queries.filtered_items(owner, model, params).filter(pk__in=ids)
        allowed.update((type_name, pk) for pk in qs.values_list("pk", flat=True))
    return allowed


def fuse(keyword: list[Ranked], meaning: list[Ranked]) -> list[Ranked]:
    """Reciprocal rank fusion, k = 60; ties broken by the semantic score."""
    fused: dict[tuple[str, Any], Ranked] = {}
    for rank, r in enumerate(keyword, start=1):
        fused[(r.item_type, r.item_id)] = Ranked(
            r.item_type, r.item_id, 1 / (RRF_K + rank), keyword=True
        )
    semantic_score: dict[tuple[str, Any], float] = {}
    for rank, r in enumerate(meaning, start=1):
        key = (r.item_type, r.item_id)
        semantic_score[key] = r.score
        entry = fused.setdefault(key, Ranked(r.item_type, r.item_id, 0.0))
        entry.score += 1 / (RRF_K + rank)
        entry.hit = r.hit
    return sorted(
        fused.values(),
        key=lambda r: (-r.score, -semantic_score.get((r.item_type, r.item_id), -2.0)),
    )


# --- match locations ----------------------------------------------------------------------------


def results(
    owner: Any, page: list[Ranked], words: list[str], *, whole_content: bool = True
) -> list[dict[str, Any]]:
    """The page's rows with their ``match``; ``whole_content=False`` (hybrid): a keyword match
    is looked for where that leg searched (the short fields and the content's opening), never
    by reading a whole content."""
    items = _load(owner, page)
    out = []
    for r in page:
        item = items.get((r.item_type, r.item_id))
        if item is None:
            continue
        row: dict[str, Any] = {"type": r.item_type, "id": str(r.item_id), "title": item.title}
        if r.item_type == "bookmark":
            row["url"] = getattr(item, "url", None)
        name_field = type(item).name_field
        if name_field:
            row["name"] = getattr(item, name_field)
        row["score"] = round(r.score, 6)
        row["match"] = match_for(item, r, words, whole_content=whole_content)
        out.append(row)
    return out


def _load(owner: Any, page: list[Ranked]) -> dict[tuple[str, Any], Item]:
    """The page's items without their content, each with ``chunk_piece``: the start of its best
    chunk — the chunk's stored preview, else cut in SQL (one query per type, whatever the size of
    the notes)."""
    previews = _previews(owner, page)
    by_type: dict[str, list[Any]] = {}
    pieces: dict[str, list[When]] = {}
    for r in page:
        by_type.setdefault(r.item_type, []).append(r.item_id)
        if r.hit is not None and r.hit.field == "content":
            preview = previews.get((r.item_type, r.item_id))
            piece = (
                Value(preview)
                if preview is not None
                else Substr("content", r.hit.start_char + 1, SNIPPET + 50)
            )
            pieces.setdefault(r.item_type, []).append(When(pk=r.item_id, then=piece))
    out: dict[tuple[str, Any], Item] = {}
    for type_name, ids in by_type.items():
        model = item_types.model_for(type_name)
        qs = model.objects.filter(owner=owner, pk__in=ids).defer("content")
        whens = pieces.get(type_name)
        if whens:
            qs = qs.annotate(chunk_piece=Case(*whens, output_field=TextField()))
        for item in queries.attach_tags(model, list(qs)):
            out[(type_name, item.pk)] = item
    return out


def _previews(owner: Any, page: list[Ranked]) -> dict[tuple[str, Any], str]:
    """The stored previews of the page's best content chunks, by item (one primary-key query)."""
    ids = [r.hit.chunk_id for r in page if r.hit is not None and r.hit.field == "content"]
    if not ids:
        return {}
    # By primary key alone (PostgreSQL would take the owner's index over 480 000 chunks for
    # "owner and id in …"); the owner is checked on the rows read.
    rows = (
        SearchChunk.objects.filter(pk__in=ids)
        .exclude(preview="")
        .values_list("owner_id", "item_type", "item_id", "preview")
    )
    return {(t, i): preview for o, t, i, preview in rows if o == owner.pk}


def match_for(
    item: Item, r: Ranked, words: list[str], *, whole_content: bool = True
) -> dict[str, Any]:
    header = _header_match(item, words)
    if header is not None and (r.keyword or r.hit is None or r.hit.field == "header"):
        return header
    if r.keyword and words and (r.hit is None or r.hit.field == "header"):
        found = _content_match(item, words, whole_content=whole_content)
        if found is not None:
            return found
    if r.hit is not None and r.hit.field == "content":
        return _chunk_match(item, r.hit, words)
    if header is not None:
        return header
    field = "title" if item.title else "description" if item.description else "title"
    return _field_match(field, getattr(item, field) or "", words)


def _header_fields(item: Item) -> list[tuple[str, str]]:
    fields = [("title", item.title or ""), ("description", item.description or "")]
    fields.append(("tags", " ".join(item.tag_names())))
    if hasattr(item, "url"):
        fields.append(("url", item.url or ""))
    name_field = type(item).name_field
    if name_field:
        fields.append(("name", getattr(item, name_field) or ""))
    return fields


def _header_match(item: Item, words: list[str]) -> dict[str, Any] | None:
    for field, text in _header_fields(item):
        lowered = text.lower()
        if text and any(w in lowered for w in words):
            return _field_match(field, text, words)
    return None


def _field_match(field: str, text: str, words: list[str]) -> dict[str, Any]:
    snippet = _cut(text, 0)
    return {
        "field": field,
        "start_line": None,
        "end_line": None,
        "snippet": snippet,
        "highlights": highlights(snippet, words),
    }


def _content_match(
    item: Item, words: list[str], *, whole_content: bool = True
) -> dict[str, Any] | None:
    """The first occurrence of the longest query word that occurs (a misspelt word does not,
    its near word does): looked for in the lowercased opening first (PostgreSQL: stored, and
    reading a prefix of a large content decompresses only that prefix; SQLite: from the search
    index's row), then in the whole content, read at most once for all the words."""
    whole: _Whole | None = None
    for word in sorted(words, key=len, reverse=True)[:3]:
        found = _opening_match(item, word, words)
        if found is None and whole_content:
            whole = whole or _Whole(item)
            found = whole.match(word, words)
        if found is not None:
            return found
    return None


def _opening_match(item: Item, word: str, words: list[str]) -> dict[str, Any] | None:
    if queries.uses_fts():
        opening = RawSQL(OPENING_COLUMN, [], output_field=TextField())
        return _word_match_in(item, StrIndex(opening, Value(word)), words)
    return _word_match_in_opening(item, word, words)


class _Whole:
    """An item's whole content, read and lowercased once for all the query's words: in SQL each
    expression that used the position searched the whole content again."""

    def __init__(self, item: Item) -> None:
        model = type(item)
        stored = model.objects.filter(pk=item.pk).values_list("content", flat=True).first()
        self.text: str = stored or ""
        lowered = self.text.lower()
        # A few characters lowercase to two ("İ"): positions in the copy would not be the text's.
        self.lowered = lowered if len(lowered) == len(self.text) else None

    def match(self, word: str, words: list[str]) -> dict[str, Any] | None:
        if self.lowered is not None:
            pos = self.lowered.find(word)
        else:
            found = re.search(re.escape(word), self.text, re.IGNORECASE)
            pos = found.start() if found else -1
        return _located(self.text, pos, words) if pos >= 0 else None


def _word_match_in_opening(item: Item, word: str, words: list[str]) -> dict[str, Any] | None:
    texts = fulltext.indexed_opening(type(item), item.pk)
    position = texts[0].find(word) if texts else -1
    if texts is None or position < 0:
        return None
    return _located(texts[1], position, words)


def _located(text: str, pos: int, words: list[str]) -> dict[str, Any]:
    """The content match at ``pos`` of ``text``: its line and the snippet around it."""
    line = text.count("\n", 0, pos) + 1
    start = max(pos - 100, 0)
    snippet = _cut(text[start : start + SNIPPET], 0, leading=start > 0)
    return _content_location(line, line, snippet, words)


def _word_match_in(item: Item, pos: StrIndex, words: list[str]) -> dict[str, Any] | None:
    model = type(item)
    head = Substr("content", 1, F("pos"))  # type: ignore[arg-type]  # stubs: F is an Expression
    row = (
        model.objects.filter(pk=item.pk)
        .annotate(pos=pos)
        .filter(pos__gt=0)
        .annotate(
            line=Length(head) - Length(Replace(head, Value("\n"), Value(""))) + 1,
            near=Substr("content", Greatest(F("pos") - 100, Value(1)), SNIPPET),
            near_from=Greatest(F("pos") - 100, Value(1)),
        )
        .values("line", "near", "near_from")
        .first()
    )
    if row is None:
        return None
    snippet = _cut(row["near"] or "", 0, leading=row["near_from"] > 1)
    return _content_location(row["line"], row["line"], snippet, words)


def _chunk_match(item: Item, hit: ChunkHit, words: list[str]) -> dict[str, Any]:
    snippet = _cut(getattr(item, "chunk_piece", None) or "", 0, leading=False)
    return _content_location(hit.start_line, hit.end_line, snippet, words)


def _content_location(
    start: int | None, end: int | None, snippet: str, words: list[str]
) -> dict[str, Any]:
    return {
        "field": "content",
        "start_line": start,
        "end_line": end,
        "snippet": snippet,
        "highlights": highlights(snippet, words),
    }


def _cut(text: str, start: int, *, leading: bool = False) -> str:
    """At most ``SNIPPET`` characters, whitespace runs collapsed, ``…`` where cut."""
    flat = " ".join(text[start:].split())
    room = SNIPPET - (1 if leading else 0)
    cut = len(flat) > room
    body = flat[: room - 1] if cut else flat
    return ("…" if leading else "") + body + ("…" if cut else "")


def highlights(snippet: str, words: list[str]) -> list[list[int]]:
    lowered = snippet.lower()
    spans = []
    for w in words:
        for m in re.finditer(re.escape(w), lowered):
            spans.append([m.start(), m.end()])
    spans.sort()
    return spans


def index_status(owner: Any) -> dict[str, Any]:
    """``/api/search/status/``: items waiting, vectors of the current model, the model."""
    model = provider().model
    return {
        "pending": SearchDirty.objects.filter(owner=owner).count(),
        "vectors": SearchChunk.objects.filter(owner=owner, model=model).count(),
        "model": model,
    }
