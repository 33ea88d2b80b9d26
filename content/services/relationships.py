"""Links between two of one owner's items (SPEC §12): create (idempotent), describe, remove.

Both ends are loaded under a row lock, in the links' canonical order so two concurrent links
between the same items cannot deadlock, and the per-item limit is checked while they are held.
Linking does not move either item's ``updated_at``; both ends record a history event.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from content import history, item_types, queries, rules
from content.errors import FieldLimitExceeded
from content.history import Actor
from content.models import HistoryAction, Item, Relationship
from content.queries import ItemRef, parse_pk
from content.queries.items import item_query
from content.shapes import Link, dt
from tiddly.errors import NotFound, ValidationFailed


@dataclass(frozen=True, order=True)
class End:
    """One end of a link: (type, id) orders the ends canonically."""

    type_name: str
    pk: Any

    @classmethod
    def parse(cls, type_name: str, raw_id: object, field: str) -> End:
        try:
            model = item_types.model_for(type_name)
        except ValidationFailed as exc:
            raise ValidationFailed({field: exc.extra["fields"]["type"]}) from None
        return cls(type_name, parse_pk(raw_id, model))

    def ref(self) -> ItemRef:
        return ItemRef(item_types.model_for(self.type_name), pk=self.pk)


def link_data(link: Relationship) -> Link:
    return {
        "id": str(link.pk),
        "source_type": link.source_type,
        "source_id": str(link.source_id),
        "target_type": link.target_type,
        "target_id": str(link.target_id),
        "description": link.description,
        "created_at": dt(link.created_at),
    }


def get_link(owner: Any, raw_id: object) -> Relationship:
    try:
        found = Relationship.objects.filter(owner=owner, pk=uuid.UUID(str(raw_id))).first()
    except ValueError:  # a malformed id is no link of yours
        found = None
    if found is None:
        raise NotFound(
            f"No relationship with id {raw_id!r} was found. List an item's links with GET "
            "/api/relationships/?type=…&id=…."
        )
    return found


def links_of(owner: Any, end: End) -> Any:
    """One item's links (the item may be in any state; another owner's item is not found)."""
    model = item_types.model_for(end.type_name)
    if not model.objects.filter(owner=owner, pk=end.pk).exists():
        raise end.ref().not_found()
    return Relationship.objects.filter(owner=owner).touching(end.type_name, end.pk)


@transaction.atomic
def create_link(
    *, owner: Any, source: End, target: End, description: str | None, actor: Actor
) -> tuple[Relationship, bool]:
    """The link between the two items: ``(link, True)`` when made now, ``(existing, False)``
    when they were already linked (its description is left as it was)."""
    if source == target:
        raise ValidationFailed(
            {"target_id": ["An item cannot be linked to itself: pick another target."]}
        )
    rules.check_length("description", description, "relationship_description")
    low, high = sorted((source, target))
    items = [_locked(owner, low), _locked(owner, high)]
    pair = {
        "source_type": low.type_name,
        "source_id": low.pk,
        "target_type": high.type_name,
        "target_id": high.pk,
    }
    existing = Relationship.objects.filter(owner=owner, **pair).first()
    if existing is not None:
        return existing, False
    for item in items:
        _check_room(item)
    try:
        with transaction.atomic():
            link = Relationship.objects.create(owner=owner, description=description, **pair)
    except IntegrityError:  # linked concurrently (the other order locks the same rows first)
        return Relationship.objects.get(owner=owner, **pair), False
    for item in items:
        history.record_event(item=item, action=HistoryAction.LINK, actor=actor)
    return link, True


@transaction.atomic
def describe_link(*, owner: Any, link_id: object, description: str | None) -> Relationship:
    link = get_link(owner, link_id)
    rules.check_length("description", description, "relationship_description")
    link.description = description
    link.save(update_fields=["description"])
    return link


@transaction.atomic
def delete_link(*, owner: Any, link_id: object, actor: Actor) -> None:
    link = get_link(owner, link_id)
    ends = sorted((End(link.source_type, link.source_id), End(link.target_type, link.target_id)))
    items = [_locked(owner, end, allow_deleted=True) for end in ends]
    link.delete()
    for item in items:
        history.record_event(item=item, action=HistoryAction.UNLINK, actor=actor)


def _locked(owner: Any, end: End, *, allow_deleted: bool = False) -> Item:
    ref = end.ref()
    # With its content, as every locked write loads it: the history event snapshots the item.
    item = queries.one_with_content(item_query(owner, ref, lock=True, live=not allow_deleted))
    if item is None:
        raise ref.not_found()
    return item


def _check_room(item: Item) -> None:
    limit = rules.limit("relationships_per_item")
    count = Relationship.objects.touching(item.type_name, item.pk).count()
    if count >= limit:
        raise FieldLimitExceeded(
            "relationships",
            count,
            limit,
            unit="links",
            message=f"{item.label()} already has {count} links, the most an item may have. "
            "Remove a link (DELETE /api/relationships/{id}/) before adding another.",
        )
