"""Content's models, one module per subject; import them from here (``content.models``).

``items`` (the item base, bookmarks, notes, tags), ``history`` (version rows), ``organise`` (saved
filters, links). A new capability (page capture, embeddings, the change log, webhooks, share
links) adds its models as a module here and one import line below.
"""

from __future__ import annotations

from content.models.capture import CaptureStatus, PageCapture
from content.models.changes import Change, ChangeAction, ChangeLogWatermark
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
from content.models.search import SearchChange, SearchChunk, SearchDirty
from content.models.sharing import Share, new_token, share_url, token_digest
from content.models.webhooks import DeliveryStatus, Webhook, WebhookDelivery

__all__ = [
    "VERSIONED_ACTIONS",
    "Bookmark",
    "CaptureStatus",
    "Change",
    "ChangeAction",
    "ChangeLogWatermark",
    "DeliveryStatus",
    "HistoryAction",
    "Item",
    "ItemQuerySet",
    "ItemState",
    "ItemVersion",
    "Note",
    "PageCapture",
    "Relationship",
    "RelationshipQuerySet",
    "SavedFilter",
    "SearchChange",
    "SearchChunk",
    "SearchDirty",
    "Share",
    "SortKey",
    "SortOrder",
    "Tag",
    "Webhook",
    "WebhookDelivery",
    "item_indexes",
    "new_token",
    "share_url",
    "state_q",
    "token_digest",
    "unique_among_live",
]
