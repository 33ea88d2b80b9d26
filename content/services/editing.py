"""str-replace on an item's content (SPEC §4): one edit, ``replace_all``, ``edits``, dry runs.

The matching is the pure text core (``content.text.replace``); this module reads the item, plans
the edit, and writes it with its history version under the row lock.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from content import history, rules
from content.errors import (
    ContentEmpty,
    FieldLimitExceeded,
    MultipleMatches,
    NoMatch,
    OverlappingEdits,
)
from content.history import Actor
from content.history.codec import ops_patch
from content.models import HistoryAction, Item
from content.outcomes import EditOutcome
from content.queries import cache as content_cache
from content.queries.items import ItemRef, Owner
from content.search import pieces
from content.services.items import NO_PRECONDITION, ItemFields, Precondition, locked_item
from content.services.turns import long_edits
from content.text import replace
from tiddly import compiled
from tiddly.errors import ValidationFailed

__all__ = ["EditOutcome", "edit_content"]


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
    re-read without its content, which is the first read's unless ``updated_at`` moved in
    between; only then is the content read again and the match redone. On SQLite, edits of a
    content seen long take turns (``content.services.turns``).
    """
    batch = _requested_edits(old_str, new_str, replace_all, edits)
    batch_request = edits is not None
    single_all = edits is None and replace_all
    with long_edits.turn((ref.model.type_name, ref.pk, ref.name)) as seen:
        item = locked_item(owner, ref, lock=False)
        seen(len(item.content or ""))
        precondition.check(item)
        _editable(item)
        plan = _plan(item.content, batch, indexed=batch_request)
        if dry_run:
            outcome = _dry_run(item, plan, also)
            return dataclasses.replace(outcome, batch=batch_request, replace_all=single_all)
        with transaction.atomic():
            locked = locked_item(owner, ref, known=item)
            precondition.check(locked)
            _editable(locked)
            if locked.updated_at != item.updated_at or locked.content != item.content:
                plan = _plan(locked.content, batch, indexed=batch_request)
            outcome = _write_edit(locked, plan, also, actor)
        seen(len(locked.content or ""))
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
    # The plan's spans say which blocks of a long content's word pieces can have changed.
    spans = plan.spans if item.content is plan.new_content else ()
    kept = pieces.written(item, created=False, before=plan.text, spans=spans)
    with kept if "content" in changed else nullcontext():
        compiled.update(item, ["updated_at", *changed])
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
