"""The list page's tag chips, cached per owner (issue 30's 10 000-item target).

Counting every active item's tags on each request cost more than the page itself. The counts are
kept in the cache under a key that holds a change marker — each type's newest ``updated_at`` and
item count, read from the ``(owner, -updated_at)`` index in one query — so an edit, a new item or
a purge misses at once. What moves no ``updated_at`` (a tag renamed or deleted, an archive date
reached) shows at most ``TTL`` seconds late.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max

from content import item_types, queries
from content.queries.lists import TagCount

TTL = 60


def marker(owner: Any, types: list[str]) -> str:
    """A digest of each type's (newest ``updated_at``, item count): one UNION ALL query."""
    parts = [
        item_types.model_for(name)
        ._default_manager.filter(owner=owner)
        .values("owner")
        .annotate(newest=Max("updated_at"), n=Count("*"))
        .values_list("newest", "n")
        .order_by()
        for name in types
    ]
    if not parts:
        return ""
    union = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
    return hashlib.sha256(repr(sorted(map(repr, union))).encode()).hexdigest()[:24]


def top_tags(owner: Any, types: list[str], limit: int) -> list[TagCount]:
    """``queries.top_tags``, served from the cache while the owner's items are unchanged."""
    key = f"library-chips:{owner.pk}:{','.join(sorted(types))}:{limit}:{marker(owner, types)}"
    found = cache.get(key)
    if found is None:
        found = queries.top_tags(owner, types, limit)
        cache.set(key, found, TTL)
    return list(found)
