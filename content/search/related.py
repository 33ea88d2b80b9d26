"""Related items and tag suggestions by meaning (SPEC §16): nearest neighbours of an item."""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection
from typing import Any

import numpy as np

from content import item_types
from content.errors import SearchUnavailable
from content.models import Item, Relationship
from content.queries import lists as queries
from content.queries.items import display_title
from content.queries.vocabulary import visible_tag_names
from content.search import semantic
from content.search.embeddings import ProviderUnavailable, query_provider
from content.shapes import RelatedByMeaning
from content.text.chunks import embed_text, item_chunks

NEIGHBOURS = 10
SUGGESTIONS = 10


def _vector(owner: Any, item: Item, model: str) -> np.ndarray:
    vector = semantic.vector_of(owner.pk, model, (item.type_name, item.pk))
    if vector is not None:
        return vector
    # Not indexed yet (just written): embed its header and first chunks now.
    chunks = item_chunks(
        title=item.title,
        description=item.description,
        tags=[t.name for t in item.tags.all()],
        content=(item.content or "")[:20_000],
    )
    texts = [embed_text(c) for c in chunks] or [display_title(item) or ""]
    rows = query_provider().embed(texts)
    mean = rows.mean(axis=0)
    return np.asarray(mean / (np.linalg.norm(mean) or 1.0), dtype=np.float32)


def nearest(
    owner: Any, item: Item, limit: int, types: Collection[str] | None = None
) -> list[dict[str, Any]]:
    """The owner's nearest active items (of ``types``; None = every type), the item itself
    excluded: ``{type, id, title, score}``."""
    embedding_model = query_provider().model
    try:
        vector = _vector(owner, item, embedding_model)
    except ProviderUnavailable as exc:
        raise SearchUnavailable(f"Search by meaning is unavailable: {exc}.") from exc
    ranked = semantic.ranking(
        owner.pk, embedding_model, vector, types=None if types is None else set(types)
    )
    hits = list(
        itertools.islice(
            (h for h in ranked if (h.item_type, h.item_id) != (item.type_name, item.pk)),
            max(limit * 5, 50),
        )
    )
    by_type: dict[str, list[Any]] = {}
    for h in hits:
        by_type.setdefault(h.item_type, []).append(h.item_id)
    found: dict[tuple[str, Any], Item] = {}
    for type_name, ids in by_type.items():
        model = item_types.model_for(type_name)
        live = queries.owned(owner, model).active().filter(pk__in=ids).prefetch_related("tags")
        found.update({(type_name, i.pk): i for i in live})
    out = []
    for h in hits:
        other = found.get((h.item_type, h.item_id))
        if other is not None:
            out.append(
                {
                    "type": h.item_type,
                    "id": str(h.item_id),
                    "title": display_title(other),
                    "score": round(h.score, 6),
                    "_item": other,
                }
            )
        if len(out) == limit:
            break
    return out


def related(
    owner: Any, item: Item, limit: int, types: Collection[str] | None = None
) -> list[RelatedByMeaning]:
    """``nearest`` with ``linked``: whether a §12 link joins the two."""
    links = Relationship.objects.filter(owner=owner).touching(item.type_name, item.pk)
    linked = {tuple(map(str, link.other_end(item.type_name, item.pk))) for link in links}
    return [
        {
            "type": r["type"],
            "id": r["id"],
            "title": r["title"],
            "score": r["score"],
            "linked": (r["type"], r["id"]) in linked,
        }
        for r in nearest(owner, item, limit, types)
    ]


def suggestions(owner: Any, item: Item, types: Collection[str] | None = None) -> dict[str, Any]:
    """Tags the item lacks, from its neighbours' tags (neighbours of ``types``) and the owner's
    tag names in its text."""
    neighbours = nearest(owner, item, NEIGHBOURS, types)
    own = {t.name for t in item.tags.all()}
    scores: dict[str, float] = {}
    for r in neighbours:
        for tag in r["_item"].tags.all():
            if tag.name not in own:
                scores[tag.name] = scores.get(tag.name, 0.0) + max(r["score"], 0.0) / NEIGHBOURS
    text = " ".join(filter(None, [item.title, item.description, (item.content or "")[:100_000]]))
    lowered = text.lower()
    names = visible_tag_names(owner, types).exclude(name__in=own)
    for name in names:
        if re.search(rf"(?<!\w){re.escape(name.lower())}(?!\w)", lowered):
            scores[name] = scores.get(name, 0.0) + 0.5
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:SUGGESTIONS]
    return {
        "tags": [{"name": n, "score": round(s, 6)} for n, s in ranked],
        "related": [_public(r) for r in neighbours[:SUGGESTIONS]],
    }


def _public(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "_item"}
