"""Every write to bookmarks, notes and prompts. REST views, the admin and MCP tools call these.

Each service is keyword-only, runs in one transaction, takes the owner, and raises a
``tiddly.errors.TiddlyError`` on bad input — in which case nothing is written.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, TypeVar, cast

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from content import content_cache, history, rules, saved_filters
from content.history import Actor
from content.history_codec import ops_patch
from content.models import HistoryAction, Item, Relationship, Tag
from content.queries import one_with_content
from content.reads import ItemRef, Owner
from content.representation import etag, item_data
from content.tags import get_or_create_tags as _get_or_create_tags
from content.text import replace
from tiddly.errors import (
    BadState,
    ContentEmpty,
    FieldLimitExceeded,
    MultipleMatches,
    NameConflict,
    NoMatch,
    NotFound,
    OverlappingEdits,
    PreconditionFailed,
    StaleItem,
    ValidationFailed,
)

__all__ = ["Actor", "ItemFields", "ItemRef", "Precondition"]

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
            raise PreconditionFailed(item_data(item))
        if self.expected_updated_at is not None and item.updated_at > self.expected_updated_at:
            raise StaleItem(item_data(item))


NO_PRECONDITION = Precondition()


# --- reading an item for a write ----------------------------------------------------------------


def _locked(owner: Owner, ref: ItemRef, *, allow_deleted: bool = False, lock: bool = True) -> Item:
    """The item a write acts on, under its row lock (``lock=False``: a plain fresh read)."""
    qs = ref.model.objects.select_for_update() if lock else ref.model.objects.all()
    qs = qs.filter(owner=owner, **ref.lookup())
    if ref.name is not None:
        qs = qs.active()
    elif not allow_deleted:
        qs = qs.filter(deleted_at__isnull=True)
    item = one_with_content(qs)
    if item is None:
        raise ref.not_found()
    return item


# --- create / update ----------------------------------------------------------------------------


def create_item(*, owner: Owner, model: type[ItemT], data: ItemFields, actor: Actor) -> ItemT:
    now = timezone.now()
    item = model(owner=owner, created_at=now, updated_at=now, last_used_at=now)
    tags = _apply_fields(item, data, creating=True)
    item.validate_state()
    with transaction.atomic():
        _check_unique(item)
        _save(item, force_insert=True)
        names = _set_tags(item, tags or [], creating=True)
        history.record_version(
            item=item,
            action=HistoryAction.CREATE,
            changed_fields=history.filled_fields(item, names),
            actor=actor,
            tag_names=names,
        )
    return item


def check_create(*, owner: Owner, model: type[Item], data: ItemFields) -> None:
    """Every check ``create_item`` makes, writing nothing (the admin validates forms with it)."""
    item = model(owner=owner)
    _apply_fields(item, data, creating=True)
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
    item = _locked(owner, ref)
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
    _apply_fields(item, data, creating=False)
    if any(getattr(item, f) != value for f, value in before.items()):
        item.validate_state()
        _check_unique(item)


def _update(item: Item, data: ItemFields, *, actor: Actor, action: str) -> Item:
    """Apply ``data`` to the locked ``item``; save and record a version if anything changed."""
    before = _field_values(item)
    old_tags = item.tag_names()
    new_tags = _apply_fields(item, data, creating=False)
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
        _save(item)
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
    item = _locked(owner, ref)
    row = history.get_version(item, version)
    if version == history.latest_version(item):
        raise BadState(
            f"Version {version} is already the current version of this {item.type_name}; there "
            "is nothing to restore. Pick an older version from GET …/history/."
        )
    precondition.check(item)
    data: ItemFields = history.restore_data(item, row)  # type: ignore[assignment]
    return _update(item, data, actor=actor, action=HistoryAction.RESTORE)


_SIMPLE_FIELDS = ("title", "description", "content", "archived_at")


def _field_values(item: Item) -> dict[str, Any]:
    return {f: getattr(item, f) for f in (*_SIMPLE_FIELDS, *item.metadata_fields)}


def _apply_fields(item: Item, data: Mapping[str, Any], *, creating: bool) -> list[str] | None:
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


def _save(item: Item, *, force_insert: bool = False) -> None:
    """Save, turning a lost uniqueness race into the same 409 the pre-check gives."""
    try:
        with transaction.atomic():
            item.save(force_insert=force_insert)
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
    tags = _get_or_create_tags(item.owner_id, names)
    item.tags.set(tags)
    return sorted(names)


# --- str-replace --------------------------------------------------------------------------------


@dataclass(frozen=True)
class EditOutcome:
    """What an edit request did (or, on a dry run, would do).

    ``results`` has one entry per requested edit; ``diff`` is set on dry runs only.
    """

    item: Item
    results: tuple[replace.EditResult, ...]
    changed: bool
    batch: bool = False  # the request sent ``edits`` (answers list one result per edit)
    replace_all: bool = False  # the single edit had ``replace_all`` (answers count replacements)
    dry_run: bool = False
    diff: str | None = None
    diff_truncated: bool = False

    @property
    def match_type(self) -> str:
        return self.results[0].match_type

    @property
    def line(self) -> int:
        return self.results[0].line

    @property
    def replacements(self) -> int:
        return sum(result.replacements for result in self.results)


def edit_content(
    *,
    owner: Owner,
    ref: ItemRef,
    actor: Actor,
    old_str: str | None = None,
    new_str: str | None = None,
    replace_all: bool = False,
    edits: Sequence[replace.Edit] | None = None,
    also: ItemFields | None = None,
    precondition: Precondition = NO_PRECONDITION,
    dry_run: bool = False,
) -> EditOutcome:
    """Apply one edit (``old_str``/``new_str``/``replace_all``) or several (``edits``) as one
    change (SPEC §4.3).

    Every edit is matched against the original content (progressive matching: exact →
    whitespace-normalised → indentation-relative); spans must not overlap. ``also`` holds type
    fields changed atomically with the edit (a prompt's ``arguments``); the whole new state is
    validated before anything is written, and one history version records the request. A result
    equal to the current state writes nothing and keeps ``updated_at``. ``dry_run`` makes every
    check and writes nothing, returning the unified diff instead.

    Matching runs on a fresh read *before* the row lock is taken, so a request that cannot match
    (or is pathologically slow to rule out) never holds the lock. Under the lock the item is
    re-read (cheap: ``content_cache``); only if it changed in between is the match redone.
    """
    batch = _requested_edits(old_str, new_str, replace_all, edits)
    item = _locked(owner, ref, lock=False)
    precondition.check(item)
    _editable(item)
    batch_request = edits is not None
    single_all = edits is None and replace_all
    plan = _plan(item.content, batch, indexed=batch_request)
    if dry_run:
        outcome = _dry_run(item, plan, also)
        return dataclasses.replace(outcome, batch=batch_request, replace_all=single_all)
    with transaction.atomic():
        locked = _locked(owner, ref)
        precondition.check(locked)
        _editable(locked)
        if locked.updated_at != item.updated_at or locked.content != item.content:
            plan = _plan(locked.content, batch, indexed=batch_request)
        outcome = _write_edit(locked, plan, also, actor)
    return dataclasses.replace(outcome, batch=batch_request, replace_all=single_all)


def _requested_edits(
    old_str: str | None,
    new_str: str | None,
    replace_all: bool,
    edits: Sequence[replace.Edit] | None,
) -> list[replace.Edit]:
    """The request as a list of edits; exactly one of ``old_str`` and ``edits`` is allowed."""
    if edits is not None:
        if old_str is not None or new_str is not None or replace_all:
            raise ValidationFailed(
                {
                    "edits": [
                        "Send either old_str/new_str (with replace_all) or edits, not both: put "
                        "every change into edits, each with its own old_str, new_str and "
                        "replace_all."
                    ]
                }
            )
        if not 1 <= len(edits) <= replace.MAX_EDITS:
            raise ValidationFailed(
                {"edits": [f"edits must hold 1 to {replace.MAX_EDITS} edits, not {len(edits)}."]}
            )
        return list(edits)
    if old_str is None or new_str is None:
        raise ValidationFailed(
            {
                "old_str": [
                    "Send old_str and new_str (one edit), or edits (a list of "
                    "{old_str, new_str, replace_all} applied together)."
                ]
            }
        )
    return [replace.Edit(old_str, new_str, replace_all)]


def _editable(item: Item) -> None:
    if item.content is None:
        raise ContentEmpty(
            f"This {item.type_name} has no content to edit. Use PATCH (or update) to set content "
            "first."
        )


def _dry_run(item: Item, plan: replace.EditPlan, also: ItemFields | None) -> EditOutcome:
    changed = _apply_edit(copy.copy(item), plan, also)  # the outcome shows the stored item
    diff = plan.diff() if plan.changed else None
    return EditOutcome(
        item,
        plan.results,
        bool(changed),
        dry_run=True,
        diff=diff.text if diff else "",
        diff_truncated=diff.truncated if diff else False,
    )


def _write_edit(
    item: Item, plan: replace.EditPlan, also: ItemFields | None, actor: Actor
) -> EditOutcome:
    changed = _apply_edit(item, plan, also)
    outcome = EditOutcome(item, plan.results, bool(changed))
    if not changed:
        return outcome
    item.updated_at = timezone.now()
    item.save(update_fields=["updated_at", *changed])
    content_cache.remember(item)
    history.record_version(
        item=item,
        action=HistoryAction.UPDATE,
        changed_fields=changed,
        actor=actor,
        tag_names=item.tag_names(),
        patch=ops_patch(plan.reverse_ops()) if "content" in changed else None,
    )
    return outcome


def _apply_edit(item: Item, plan: replace.EditPlan, also: ItemFields | None) -> list[str]:
    """Set the planned content and ``also`` on ``item`` (not saved) and validate the whole new
    state; return the fields that changed (nothing is checked when nothing changes)."""
    changed = ["content"] if plan.changed else []
    if also:
        before = {f: getattr(item, f) for f in also}
        item.apply_type_fields(also, creating=False)
        changed += [f for f, value in before.items() if getattr(item, f) != value]
    if changed:
        if plan.changed:
            if plan.new_length > rules.limit("content"):  # before the result is built
                raise FieldLimitExceeded("content", plan.new_length, rules.limit("content"))
            item.content = plan.new_content
        item.validate_state()
    return changed


def _plan(content: str | None, edits: list[replace.Edit], *, indexed: bool) -> replace.EditPlan:
    """Match ``edits`` against ``content``; the errors name the failing edit when ``indexed``
    (the request sent ``edits``)."""
    try:
        return replace.plan_edits(
            content or "", edits, max_replacements=settings.TIDDLY_MAX_REPLACEMENTS
        )
    except replace.TooManyReplacements as exc:
        counted = f"at least {exc.count}" if exc.at_least else str(exc.count)
        raise FieldLimitExceeded(
            "replacements",
            exc.count,
            exc.limit,
            message=_which(exc.edit_index, indexed)
            + f"This request would make {counted} replacements; the limit is {exc.limit} per "
            "request. Make old_str more specific, or split the change into several requests. "
            "Nothing was changed.",
            **_index(exc.edit_index, indexed),
        ) from None
    except replace.NoMatch as exc:
        raise NoMatch(
            _which(exc.edit_index, indexed) + "The specified text was not found in the content.",
            suggestion=exc.suggestion,
            **_index(exc.edit_index, indexed),
        ) from None
    except replace.MultipleMatches as exc:
        raise MultipleMatches(
            _which(exc.edit_index, indexed)
            + f"old_str matches {exc.total} places ({exc.match_type} match); it must match "
            "exactly one (or set replace_all to change every one). Nothing was changed.",
            match_type=exc.match_type,
            matches=[
                {"field": "content", "line": m.line, "context": m.context} for m in exc.matches
            ],
            total_matches=exc.total,
            suggestion="Include more surrounding context to ensure uniqueness.",
            **_index(exc.edit_index, indexed),
        ) from None
    except replace.OverlappingEdits as exc:
        first, second = exc.edit_indexes
        raise OverlappingEdits(
            f"Edits {first} and {second} match overlapping text (lines {exc.lines[0]} and "
            f"{exc.lines[1]}). Every edit is matched against the original content and must "
            "change a different part of it: merge the two into one edit. Nothing was changed.",
            edit_indexes=exc.edit_indexes,
            lines=exc.lines,
        ) from None
    except ValueError as exc:
        raise ValidationFailed({"edits" if indexed else "old_str": [str(exc)]}) from None


def _which(index: int | None, indexed: bool) -> str:
    return f"Edit {index}: " if indexed and index is not None else ""


def _index(index: int | None, indexed: bool) -> dict[str, Any]:
    return {"edit_index": index} if indexed and index is not None else {}


# --- lifecycle ----------------------------------------------------------------------------------


@transaction.atomic
def archive_item(*, owner: Owner, ref: ItemRef, actor: Actor) -> Item:
    item = _locked(owner, ref)
    if not item.is_archived:
        item.archived_at = timezone.now()
        item.save(update_fields=["archived_at"])
        history.record_event(item=item, action=HistoryAction.ARCHIVE, actor=actor)
    return item


@transaction.atomic
def unarchive_item(*, owner: Owner, ref: ItemRef, actor: Actor) -> Item:
    item = _locked(owner, ref)
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
    item = _locked(owner, ref)
    precondition.check(item)
    item.deleted_at = timezone.now()
    item.save(update_fields=["deleted_at"])
    history.record_event(item=item, action=HistoryAction.DELETE, actor=actor)


@transaction.atomic
def delete_item_permanently(
    *, owner: Owner, ref: ItemRef, precondition: Precondition = NO_PRECONDITION
) -> None:
    """Delete for good, in any state, with all of the item's history."""
    item = _locked(owner, ref, allow_deleted=True)
    precondition.check(item)
    history.erase(item)
    Relationship.objects.touching(item.type_name, item.pk).delete()
    item.delete()


@transaction.atomic
def restore_item(*, owner: Owner, ref: ItemRef, actor: Actor) -> Item:
    """Bring an item back from the trash to active (clears archived_at too)."""
    item = _locked(owner, ref, allow_deleted=True)
    if not item.is_deleted:
        raise BadState(f"This {item.type_name} is not in the trash, so it cannot be restored.")
    item.deleted_at = None
    item.archived_at = None
    _check_unique(item)
    _save(item)
    history.record_event(item=item, action=HistoryAction.UNDELETE, actor=actor)
    return item


def track_usage(*, owner: Owner, ref: ItemRef) -> None:
    updated = ref.model.objects.filter(owner=owner, **ref.lookup()).update(
        last_used_at=timezone.now()
    )
    if not updated:
        raise ref.not_found()


# --- tags ---------------------------------------------------------------------------------------


@transaction.atomic
def rename_tag(*, owner: Owner, name: str, new_name: str) -> Tag:
    tag = _tag(owner, name)
    target = check_rename_tag(owner=owner, tag=tag, new_name=new_name)
    if target != tag.name:
        saved_filters.rename_tag_in_expressions(tag, target)
        tag.name = target
        tag.save(update_fields=["name"])
    return tag


def check_rename_tag(*, owner: Owner, tag: Tag, new_name: str) -> str:
    """The normalised new name, or the error ``rename_tag`` would raise (writes nothing)."""
    (target,) = rules.normalize_tags([new_name]) or [""]
    if not target:
        raise rules.invalid("name", "The new tag name cannot be blank.")
    if target != tag.name and Tag.objects.filter(owner=owner, name=target).exists():
        raise NameConflict(
            f"A tag named '{target}' already exists. Pick another name, or delete one of the tags."
        )
    return target


@transaction.atomic
def delete_tag(*, owner: Owner, name: str) -> None:
    tag = _tag(owner, name)
    saved_filters.check_tag_unused(tag)
    tag.delete()


def _tag(owner: Owner, name: str) -> Tag:
    tag = None
    if rules.storable(name):
        tag = Tag.objects.filter(owner=owner, name=name.strip().lower()).first()
    if tag is None:
        raise NotFound(f"No tag named '{name}' was found.")
    return tag
