"""The list page's tag chips, cached per owner (issue 30's 10 000-item target), and the list's
count from the same query.

Counting every active item's tags on each request cost more than the page itself. The counts are
kept in the cache under a key that holds a change marker — each type's newest ``updated_at`` and
item count — so an edit, a new item or a purge misses at once. What moves no ``updated_at`` (a tag
renamed or deleted, an archive date reached) shows at most ``TTL`` seconds late. The query that
reads the marker scans the owner's rows anyway, so it also counts the rows the list keeps (its
views, tags and saved filter): the list needs no count query of its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db.models import Count, IntegerField, Max, Value
from django.utils import timezone

from content import item_types, queries
from content.queries.lists import TagCount
from tiddly import compiled

TTL = 60


@dataclass(frozen=True)
class Survey:
    marker: str  # a digest of each type's (newest ``updated_at``, item count)
    listed: int  # the items a list with these parameters holds, ``q`` aside


def survey(owner: Any, types: list[str], params: queries.ListParams | None = None) -> Survey:
    """The change marker and the list's count: one UNION ALL query, one row per type, its SQL
    compiled once per shape (``tiddly.compiled``)."""
    if not types:
        return Survey("", 0)

    def build(owner: Any, now: datetime) -> Any:
        parts = []
        for name in types:
            model = item_types.model_for(name)
            listed: Any = Value(0, output_field=IntegerField())
            if params is not None and params.includes(name):
                listed = Count("pk", filter=queries.listed_q(model, params, now))
            rows = model._default_manager.filter(owner=owner).values("owner").order_by()
            parts.append(
                rows.annotate(newest=Max("updated_at"), n=Count("*"), listed=listed).values(
                    "newest", "n", "listed"
                )
            )
        return parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]

    found = compiled.rows(("survey", tuple(types), repr(params)), build, owner.pk, timezone.now())
    marker = repr(sorted(repr((str(r["newest"]), r["n"])) for r in found))
    digest = hashlib.sha256(marker.encode()).hexdigest()[:24]
    return Survey(digest, sum(r["listed"] for r in found))


def top_tags(owner: Any, types: list[str], limit: int, marker: str) -> list[TagCount]:
    """``queries.top_tags``, served from the cache while ``marker`` (``survey``'s) is unchanged."""
    key = f"library-chips:{owner.pk}:{','.join(sorted(types))}:{limit}:{marker}"
    found = cache.get(key)
    if found is None:
        found = queries.top_tags(owner, types, limit)
        cache.set(key, found, TTL)
    return list(found)
