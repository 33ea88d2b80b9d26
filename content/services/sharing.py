"""Sharing an item publicly, and what the public page and "Save a copy" read (SPEC §17.4).

Sharing is a person's decision: REST and the admin call these, no MCP tool does.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from content import history, item_types
from content.history import Actor
from content.models import HistoryAction, Item, Share, token_digest
from content.queries.items import ItemRef, Owner
from content.services.items import ItemFields, create_item, item_fields, locked_item

# Looked up when a token matches nothing, so a miss runs the same queries as a hit.
_NO_ITEM = uuid.UUID(int=0)


@dataclass(frozen=True)
class ShareOutcome:
    share: Share
    created: bool


def _live_item(owner: Owner, ref: ItemRef) -> Item:
    # Items in the trash cannot be shared: a 404 like any item the caller cannot see.
    return locked_item(owner, ref)


def share_item(
    *, owner: Owner, ref: ItemRef, rotate: bool = False, origin: str = "", actor: Actor
) -> ShareOutcome:
    """The item's link: the existing one (``created`` False), or a new one — also when
    ``rotate`` replaces the token, which stops the old URL in the same commit."""
    with transaction.atomic():
        item = _live_item(owner, ref)
        share = (
            Share.objects.select_for_update()
            .filter(item_type=item.type_name, item_id=item.pk)
            .first()
        )
        if share is not None and not rotate:
            return ShareOutcome(share, created=False)
        if share is None:
            share = Share(owner_id=item.owner_id, item_type=item.type_name, item_id=item.pk)
        share.set_token()
        share.origin = origin
        # The item's row lock serialises shares of one item, so the one-per-item constraint
        # is never hit by two first shares racing.
        share.save()
        history.record_event(item=item, action=HistoryAction.SHARE, actor=actor)
    return ShareOutcome(share, created=True)


def unshare_item(*, owner: Owner, ref: ItemRef, actor: Actor) -> None:
    """Remove the item's link (idempotent: an unshared item stays unshared, still a 204)."""
    with transaction.atomic():
        item = locked_item(owner, ref, allow_deleted=True)
        deleted, _ = Share.objects.filter(item_type=item.type_name, item_id=item.pk).delete()
        if deleted:
            history.record_event(item=item, action=HistoryAction.UNSHARE, actor=actor)


def revoke_share(*, share: Share, actor: Actor) -> None:
    """The admin's revoke: the share row as listed, for whichever owner it belongs to."""
    model = item_types.model_for(share.item_type)
    with transaction.atomic():
        item = model.objects.select_for_update().filter(pk=share.item_id).first()
        Share.objects.filter(pk=share.pk).delete()
        if item is not None:
            history.record_event(item=item, action=HistoryAction.UNSHARE, actor=actor)


def shared_item(token: str) -> Item | None:
    """The live item a public token names, or None — by one path whatever the outcome.

    Unknown, revoked (deleted row) and trashed items all run the same two indexed queries: the
    digest lookup, then an item lookup (a nil id on a miss), with no early return between them,
    so a visitor cannot tell from the answer or its timing whether a token ever existed.
    """
    share = (
        Share.objects.filter(token_hash=token_digest(token)).only("item_type", "item_id").first()
    )
    type_name = share.item_type if share is not None else "note"
    item_id = share.item_id if share is not None else _NO_ITEM
    model = item_types.registry().get(type_name) or item_types.model_for("note")
    item = model.objects.filter(pk=item_id, deleted_at__isnull=True).first()
    return item if share is not None else None


def share_of(item: Item) -> Share | None:
    return Share.objects.filter(item_type=item.type_name, item_id=item.pk).first()


def copy_fields(item: Item) -> ItemFields:
    """What "Save a copy" gives the visitor: the same type, text, tags and type fields."""
    data: dict[str, Any] = {
        "title": item.title,
        "description": item.description,
        "content": item.content,
        "tags": item.tag_names(),
    }
    for name in item.extra_fields:
        data[name] = getattr(item, name)
    return item_fields(data)


def save_copy(*, owner: Owner, item: Item, actor: Actor) -> Item:
    """Copy a shared item into ``owner``'s account through the create service (a URL or name
    they already have -> its 409 error, nothing written)."""
    return create_item(owner=owner, model=type(item), data=copy_fields(item), actor=actor)
