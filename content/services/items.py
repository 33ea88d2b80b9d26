"""Every write to bookmarks, notes and prompts. REST views, the admin and MCP tools call these.

Each service is keyword-only, runs in one transaction, takes the owner, and raises a
``tiddly.errors.TiddlyError`` on bad input — in which case nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, TypeVar, cast

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from content import history, item_types, rules
from content.errors import BadState, PreconditionFailed, StaleItem
from content.history import Actor
from content.models import HistoryAction, Item, Relationship
from content.queries import cache as content_cache
from content.queries.items import ItemRef, Owner, item_query
from content.queries.lists import one, one_with_content
from content.search import pieces
from content.shapes import conflict_state, etag
from content.tags import get_or_create_tags
from tiddly import compiled
from tiddly.sqlite import base as sqlite_base

__all__ = ["Actor", "CreateOptions", "ItemFields", "ItemRef", "Precondition"]

ItemT = TypeVar("ItemT", bound=Item)


class ItemFields(TypedDict, total=False):
    """What a create or a partial update may set. Absent keys stay; ``None`` clears.

    Every type takes the common fields; a type's own (a bookmark's ``url``, a prompt's ``name``
    and ``arguments``) are read by its model's ``apply_type_fields``.
    """

    title: str | None
    description: str | None
    content: str | None
    tags: list[str] | None
    archived_at: datetime | None
    url: str | None
    name: str | None
    arguments: list[dict[str, Any]] | None


def item_fields(data: Mapping[str, Any]) -> ItemFields:
    """Validated request data (a serializer's or a tool's arguments) as ``ItemFields``."""
    unknown = set(data) - set(ItemFields.__annotations__)
    if unknown:
        raise TypeError(f"Not item fields: {sorted(unknown)}")  # a caller's bug, not bad input
    return cast(ItemFields, dict(data))


@dataclass(frozen=True)
class Precondition:
    """What the caller last saw: ``expected_updated_at`` (409 when stale) and/or the entity tags
    of an ``If-Match`` header (412 when none is current; ``*`` matches anything)."""

    expected_updated_at: datetime | None = None
    if_match: tuple[str, ...] | None = None

    @classmethod
    def from_if_match(
        cls, header: str | None, expected_updated_at: datetime | None = None
    ) -> Precondition:
        if header is None or header.strip() == "*":
            return cls(expected_updated_at)
        tags = tuple(tag.strip().removeprefix("W/") for tag in header.split(","))
        return cls(expected_updated_at, tags)

    def check(self, item: Item) -> None:
        if self.if_match is not None and etag(item) not in self.if_match:
            raise PreconditionFailed(conflict_state(item))
        if self.expected_updated_at is not None and item.updated_at > self.expected_updated_at:
            raise StaleItem(conflict_state(item))


NO_PRECONDITION = Precondition()


# --- reading an item for a write ----------------------------------------------------------------


# A content this long (characters) known from a read moments ago is not read again if unchanged.
KNOWN_CONTENT_CHARS = 65_536


def locked_item(
    owner: Owner,
    ref: ItemRef,
    *,
    allow_deleted: bool = False,
    lock: bool = True,
    known: Item | None = None,
) -> Item:
    """The item a write acts on, under its row lock (``lock=False``: a plain fresh read).

    ``known``: the same item as read moments ago without the lock. When the row's ``updated_at``
    is still its ``updated_at``, its content is taken instead of read again (every content
    change moves ``updated_at``, under this lock: see ``content.queries.cache``) — a 6 MB note's
    edit then reads it once, not twice. A short content is read again with the row: when edits
    of one item queue for the lock, each finds the row moved and would pay a second query.
    """
    qs = item_query(owner, ref, lock=lock, live=not allow_deleted)
    if known is not None and len(known.content or "") >= KNOWN_CONTENT_CHARS:
        item = one(compiled.then(qs, "deferred", _deferred))
        if item is not None and item.pk == known.pk and item.updated_at == known.updated_at:
            item.content = known.content
            return item
    item = one_with_content(qs)
    if item is None:
        raise ref.not_found()
    return item


def _deferred(qs: QuerySet) -> QuerySet:
    return qs.defer("content")


# --- create / update ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateOptions:
    """What the caller asks of a create's side effects (SPEC §15): ``capture=False`` keeps a
    bookmark created without content from being captured; ``page_html`` is the page as the
    client's browser rendered it, extracted instead of fetched."""

    capture: bool | None = None
    page_html: str | None = None
    # What the type's ``check`` prepared before the transaction for ``apply`` (capture: the
    # page extracted from page_html, so no lock is held while extracting).
    prepared: Any = None


@dataclass(frozen=True)
class CreateEffect:
    """A type's side effect of every create, whichever door it came through: ``check`` runs
    before the create's transaction (bad options are a 400 and nothing is written), ``apply``
    inside it and returns the item as the caller should see it. ``check`` returns the options
    ``apply`` gets (with work it ``prepared`` outside the transaction)."""

    check: Callable[[CreateOptions], CreateOptions]
    apply: Callable[[Any, CreateOptions], Any]


_create_effects: dict[type[Item], CreateEffect] = {}


def register_create_effect(model: type[Item], effect: CreateEffect) -> None:
    """Called once when the app starts (``ContentConfig.ready``): the effect runs after every
    ``create_item`` of ``model`` — REST, MCP, the admin, pages, and doors added later."""
    _create_effects[model] = effect


NO_OPTIONS = CreateOptions()


def create_item(
    *,
    owner: Owner,
    model: type[ItemT],
    data: ItemFields,
    actor: Actor,
    options: CreateOptions = NO_OPTIONS,
) -> ItemT:
    now = timezone.now()
    item = model(owner=owner, created_at=now, updated_at=now, last_used_at=now)
    tags = apply_fields(item, data, creating=True)
    item.validate_state()
    effect = _create_effects.get(model)
    if effect is None and options != NO_OPTIONS:
        raise TypeError(f"A {model.type_name} takes no create options")  # a caller's bug
    if effect is not None:
        options = effect.check(options)  # what apply gets: it may carry prepared work
    cut = pieces.prepare(item)  # outside the transaction: SQLite's write lock is not held for it
    with transaction.atomic():
        _check_unique(item)
        _save(item, force_insert=True, prepared=cut)
        names = _set_tags(item, tags or [], creating=True)
        history.record_version(
            item=item,
            action=HistoryAction.CREATE,
            changed_fields=history.filled_fields(item, names),
            actor=actor,
            tag_names=names,
        )
        if effect is not None:
            item = effect.apply(item, options)
    # The answer shows what was just written: no reads of tags or a share link after it.
    item.prefetched_tag_names = names
    item.known_unshared = True
    return item


def check_create(*, owner: Owner, model: type[Item], data: ItemFields) -> None:
    """Every check ``create_item`` makes, writing nothing (the admin validates forms with it)."""
    item = model(owner=owner)
    apply_fields(item, data, creating=True)
    item.validate_state()
    _check_unique(item)


@transaction.atomic
def update_item(
    *,
    owner: Owner,
    ref: ItemRef,
    data: ItemFields,
    actor: Actor,
    precondition: Precondition = NO_PRECONDITION,
) -> Item:
    """Partial update: absent keys stay, ``None`` clears; ``tags``/``arguments`` replace wholly."""
    item = locked_item(owner, ref)
    precondition.check(item)
    return _update(item, data, actor=actor, action=HistoryAction.UPDATE)


def check_update(
    *, owner: Owner, ref: ItemRef, data: ItemFields, precondition: Precondition = NO_PRECONDITION
) -> None:
    """Every check ``update_item`` makes, writing nothing (the admin validates forms with it)."""
    qs = ref.model.objects.filter(owner=owner, deleted_at__isnull=True, **ref.lookup())
    item = one_with_content(qs)
    if item is None:
        raise ref.not_found()
    precondition.check(item)
    before = _field_values(item)
    apply_fields(item, data, creating=False)
    if any(getattr(item, f) != value for f, value in before.items()):
        item.validate_state()
        _check_unique(item)


def _update(item: Item, data: ItemFields, *, actor: Actor, action: str) -> Item:
    """Apply ``data`` to the locked ``item``; save and record a version if anything changed."""
    before = _field_values(item)
    old_tags = item.tag_names()
    new_tags = apply_fields(item, data, creating=False)
    changed = [f for f, value in before.items() if getattr(item, f) != value]
    names = old_tags
    if new_tags is not None and sorted(new_tags) != old_tags:
        changed.append("tags")
    state_changed = "archived_at" in changed
    changed = [f for f in changed if f != "archived_at"]
    if changed:
        item.validate_state()
        _check_unique(item)
        item.updated_at = timezone.now()
    if changed or state_changed:
        _save(item, content_written="content" in changed, before=before["content"])
    if "tags" in changed:
        names = _set_tags(item, new_tags or [])
    if changed:
        history.record_version(
            item=item,
            action=action,
            changed_fields=changed,
            actor=actor,
            tag_names=names,
            previous_content=before["content"],
        )
    item.prefetched_tag_names = names
    return item


@transaction.atomic
def restore_version(
    *,
    owner: Owner,
    ref: ItemRef,
    version: int,
    actor: Actor,
    precondition: Precondition = NO_PRECONDITION,
) -> Item:
    """Put back an older version's content and metadata as a new ``restore`` version.

    Goes through the update path, so limits, uniqueness (409) and prompt templates are checked as
    for any edit. The archive state is not part of a version: an archived item stays archived.
    """
    item = locked_item(owner, ref)
    row = history.get_version(item, version)
    if version == history.latest_version(item):
        raise BadState(
            f"Version {version} is already the current version of this {item.type_name}; there "
            "is nothing to restore. Pick an older version from GET …/history/."
        )
    precondition.check(item)
    data = item_fields(history.restore_data(item, row))
    return _update(item, data, actor=actor, action=HistoryAction.RESTORE)


_SIMPLE_FIELDS = ("title", "description", "content", "archived_at")


def _field_values(item: Item) -> dict[str, Any]:
    return {f: getattr(item, f) for f in (*_SIMPLE_FIELDS, *item.metadata_fields)}


def apply_fields(item: Item, data: Mapping[str, Any], *, creating: bool) -> list[str] | None:
    """Validate and set the given fields on ``item``; return the normalised tags if given."""
    for field in ("title", "description", "content"):
        if field in data:
            value = data[field]
            rules.check_length(field, value)
            setattr(item, field, value)
    if "archived_at" in data:
        item.archived_at = data["archived_at"]
    item.apply_type_fields(data, creating=creating)
    if "tags" in data:
        return rules.normalize_tags(data["tags"] or [])
    return None


def _save(
    item: Item,
    *,
    force_insert: bool = False,
    content_written: bool = True,
    before: str | None = None,
    prepared: pieces.Prepared | None = None,
) -> None:
    """Save, turning a lost uniqueness race into the same 409 the pre-check gives.
    ``content_written``: the content may have changed from ``before`` (its word pieces are kept
    with it); ``prepared``: a created content's pieces, cut already."""
    kept = (
        pieces.written(item, created=force_insert, before=before, prepared=prepared)
        if content_written
        else nullcontext()
    )
    if item.unique_field is None:  # no race to turn into a 409: no savepoint to pay for
        with kept:
            compiled.insert(item) if force_insert else item.save()
        content_cache.remember(item)
        return
    try:
        with transaction.atomic(), kept:
            compiled.insert(item) if force_insert else item.save()
    except IntegrityError:
        _check_unique(item)
        raise
    content_cache.remember(item)


def _check_unique(item: Item) -> None:
    field = item.unique_field
    if field is None:
        return
    value = getattr(item, field)
    clash = (
        type(item)
        .objects.filter(owner_id=item.owner_id, deleted_at__isnull=True, **{field: value})
        .exclude(pk=item.pk)
        .only("pk", "archived_at", "deleted_at")
        .first()
    )
    if clash is None:
        return
    where = " in the archive (unarchive it instead)" if clash.is_archived else ""
    raise item.conflict_error(
        f"A {item.type_name} with {field} '{value}' already exists{where}. "
        f"Use a different {field} or edit the existing {item.type_name} (existing_id).",
        existing_id=str(clash.pk),
    )


def _set_tags(item: Item, names: list[str], *, creating: bool = False) -> list[str]:
    if not names:
        if not creating:
            item.tags.clear()
        return []
    tags = get_or_create_tags(item.owner_id, names)
    if creating:
        # A new item has no links yet: insert them, with no read of the current ones first.
        links: Any = item.tags  # the related manager knows its link table and column names
        through = links.through
        source, target = links.source_field_name, links.target_field_name
        through.objects.bulk_create(
            [through(**{f"{source}_id": item.pk, f"{target}_id": tag.pk}) for tag in tags]
        )
    else:
        item.tags.set(tags)
    return sorted(names)


# --- lifecycle ----------------------------------------------------------------------------------


@transaction.atomic
def archive_item(*, owner: Owner, ref: ItemRef, actor: Actor) -> Item:
    item = locked_item(owner, ref)
    if not item.is_archived:
        item.archived_at = timezone.now()
        item.save(update_fields=["archived_at"])
        history.record_event(item=item, action=HistoryAction.ARCHIVE, actor=actor)
    return item


@transaction.atomic
def unarchive_item(*, owner: Owner, ref: ItemRef, actor: Actor) -> Item:
    item = locked_item(owner, ref)
    if not item.is_archived:
        raise BadState(f"This {item.type_name} is not archived, so it cannot be unarchived.")
    item.archived_at = None
    item.save(update_fields=["archived_at"])
    history.record_event(item=item, action=HistoryAction.UNARCHIVE, actor=actor)
    return item


@transaction.atomic
def trash_item(
    *, owner: Owner, ref: ItemRef, actor: Actor, precondition: Precondition = NO_PRECONDITION
) -> None:
    item = locked_item(owner, ref)
    precondition.check(item)
    item.deleted_at = timezone.now()
    item.save(update_fields=["deleted_at"])
    history.record_event(item=item, action=HistoryAction.DELETE, actor=actor)


def delete_item_permanently(
    *, owner: Owner, ref: ItemRef, actor: Actor, precondition: Precondition = NO_PRECONDITION
) -> None:
    """Delete for good, in any state, with all of the item's history.

    Its links go with it, and each item at their other end records an ``unlink`` event (so the
    feed has an ``unlinked`` change on that end, SPEC §17.1); the item itself records ``purged``.
    On SQLite the pages it frees are zeroed (``tiddly.sqlite.base.erasing``).
    """
    with sqlite_base.erasing(), transaction.atomic():
        _delete_permanently(owner, ref, actor, precondition)


def _delete_permanently(
    owner: Owner, ref: ItemRef, actor: Actor, precondition: Precondition
) -> None:
    found = locked_item(owner, ref, allow_deleted=True, lock=False)
    me = (found.type_name, found.pk)
    links = Relationship.objects.filter(owner=owner).touching(*me)
    # The item and the other ends of its links are locked in one canonical order, the order
    # create_link and delete_link lock in, so a concurrent link or unlink waits instead of
    # deadlocking with the purge.
    ends = _ends(links, me)
    locked = _lock_in_order(owner, sorted(ends | {me}))
    item = locked.pop(me, None)
    if item is None:  # purged by a concurrent request
        raise ref.not_found()
    precondition.check(item)
    # A link made between the first read and the item's lock (none can be made after it).
    locked.update(_lock_in_order(owner, sorted(_ends(links, me) - ends)))
    history.erase(item, source=actor.source)
    links.delete()
    for other in locked.values():
        history.record_event(item=other, action=HistoryAction.UNLINK, actor=actor)
    item.delete()


_Key = tuple[str, Any]


def _ends(links: Iterable[Relationship], me: _Key) -> set[_Key]:
    """The ``(type, id)`` of every item at the other end of ``links`` from ``me``."""
    return {
        (t, i)
        for link in links
        for t, i in ((link.source_type, link.source_id), (link.target_type, link.target_id))
        if (t, i) != me
    }


def _lock_in_order(owner: Owner, keys: list[_Key]) -> dict[_Key, Item]:
    """The items of ``keys`` (in any state; gone ones left out), locked in the order given."""
    locked: dict[_Key, Item] = {}
    for type_name, pk in keys:
        ref = ItemRef(item_types.model_for(type_name), pk=pk)
        # With content: the history event snapshots the item.
        found = one_with_content(item_query(owner, ref, lock=True))
        if found is not None:
            locked[(type_name, pk)] = found
    return locked


@transaction.atomic
def restore_item(*, owner: Owner, ref: ItemRef, actor: Actor) -> Item:
    """Bring an item back from the trash to active (clears archived_at too)."""
    item = locked_item(owner, ref, allow_deleted=True)
    if not item.is_deleted:
        raise BadState(f"This {item.type_name} is not in the trash, so it cannot be restored.")
    item.deleted_at = None
    item.archived_at = None
    _check_unique(item)
    _save(item, content_written=False)
    history.record_event(item=item, action=HistoryAction.UNDELETE, actor=actor)
    return item


def track_usage(*, owner: Owner, ref: ItemRef) -> None:
    updated = ref.model.objects.filter(owner=owner, **ref.lookup()).update(
        last_used_at=timezone.now()
    )
    if not updated:
        raise ref.not_found()
