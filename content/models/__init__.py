"""Content's models, one module per subject; import them from here (``content.models``).

``items`` (the item base, bookmarks, notes, tags), ``history`` (version rows), ``organise`` (saved
filters, links). A new capability (page capture, embeddings, the change log, webhooks, share
links) adds its models as a module here and one import line below.
"""

from __future__ import annotations

from content.models.history import VERSIONED_ACTIONS, HistoryAction, ItemVersion
from content.models.items import (
    Bookmark,
    Item,
    ItemQuerySet,
    ItemState,
    Note,
    Tag,
    item_indexes,
    state_q,
    unique_among_live,
)
from content.models.organise import (
    Relationship,
    RelationshipQuerySet,
    SavedFilter,
    SortKey,
    SortOrder,
)
from content.models.search import SearchChunk, SearchDirty, SearchGeneration

__all__ = [
    "VERSIONED_ACTIONS",
    "Bookmark",
    "HistoryAction",
    "Item",
    "ItemQuerySet",
    "ItemState",
    "ItemVersion",
    "Note",
    "Relationship",
    "RelationshipQuerySet",
    "SavedFilter",
    "SearchChunk",
    "SearchDirty",
    "SearchGeneration",
    "SortKey",
    "SortOrder",
    "Tag",
    "item_indexes",
    "state_q",
    "unique_among_live",
]
