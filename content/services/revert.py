"""Revert by token (SPEC §6): undo everything one API token changed since a time.

Each item the token changed in the window goes back to its version before the token's first
change there (one new version, source ``revert``); an item the token created goes to the trash.
An item someone else changed after the token's first change is a conflict and is left alone
unless ``force``. Earlier reverts don't count as someone else's change, and an item already in
its pre-token state is skipped, so repeating a revert changes nothing more.

``plan_revert`` decides without writing (the admin shows it on its confirmation page; a dry run
answers its counts); ``revert_token`` carries out at most ``TIDDLY_REVERT_BATCH`` items of the
plan per call, each item in its own transaction, and says how many remain (SPEC §6): a token that
touched 10 000 items is undone by repeating the same short request. The token's own state events (archive,
delete) are not undone: they do not change content and can be reversed from the trash/archive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Min

from content import history, item_types, services
from content.history import Actor
from content.models import HistoryAction, Item, ItemVersion
from content.queries import ItemRef, Owner
from tiddly.errors import TiddlyError

REVERT_SOURCE = "revert"
REVERT = "revert"
TRASH = "trash"


@dataclass(frozen=True)
class Step:
    """What happens to one item: ``revert`` to ``version``, ``trash``, or a conflict."""

    item: Item
    action: str | None  # REVERT, TRASH, or None for a conflict
    version: int | None = None  # the version to go back to (REVERT)
    reason: str | None = None  # why it is a conflict


@dataclass
class RevertReport:
    reverted: list[dict[str, Any]] = field(default_factory=list)
    trashed: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    remaining: int = 0

    def data(self) -> dict[str, Any]:
        return {
            "reverted": self.reverted,
            "trashed": self.trashed,
            "conflicts": self.conflicts,
            "remaining": self.remaining,
        }


@dataclass(frozen=True)
class _Touched:
    """One item the token changed in the window: its first and last versioned change there."""

    item_type: str
    item_id: Any
    first: int
    last: int


@dataclass(frozen=True)
class _Row:
    version: int
    action: str
    source: str
    token_prefix: str | None


# Items planned per round of queries: one query for their versions, one per type for the rows.
PLAN_CHUNK = 500


def batch_size() -> int:
    return int(settings.TIDDLY_REVERT_BATCH)


def plan_revert(
    *,
    owner: Owner,
    token_prefix: str,
    since: datetime,
    force: bool = False,
    types: list[str] | None = None,
) -> list[Step]:
    """What ``revert_token`` would do, item by item (oldest change first); writes nothing.

    ``types`` limits it to those item types (a caller may revert only what it may write). A
    constant number of queries per ``PLAN_CHUNK`` items: the decision reads version rows, never
    contents, so planning 10 000 items takes a fraction of a second.
    """
    touched = _touched(owner, token_prefix, since, types)
    steps: list[Step] = []
    for start in range(0, len(touched), PLAN_CHUNK):
        chunk = touched[start : start + PLAN_CHUNK]
        items = _items(owner, chunk)
        rows = _rows(owner, chunk)
        for entry in chunk:
            item = items.get((entry.item_type, str(entry.item_id)))
            if item is not None:
                step = _step(item, entry, rows.get(str(entry.item_id), []), token_prefix, force)
                if step is not None:
                    steps.append(step)
    return steps


@transaction.atomic
def revert_token(
    *,
    owner: Owner,
    token_prefix: str,
    since: datetime,
    force: bool = False,
    actor: Actor,
    types: list[str] | None = None,
    limit: int | None = None,
) -> RevertReport:
    """Undo the token's changes since ``since`` on the owner's items (see the module doc), at
    most ``limit`` (default ``TIDDLY_REVERT_BATCH``) items per call: ``remaining`` tells how
    many reverts and trashes are still to do, and the caller repeats the same call until it is 0.

    A batch is one transaction, each item a savepoint in it: an item whose restore fails a check (its old URL or name
    is now taken, its template no longer validates) is reported as a conflict with that reason
    and left as it is; the other items are still reverted. Conflicts do not count against the
    batch; those met before the batch ends are listed.
    """
    actor = Actor(source=REVERT_SOURCE, token_prefix=actor.token_prefix)
    limit = batch_size() if limit is None else limit
    report = RevertReport()
    steps = plan_revert(
        owner=owner, token_prefix=token_prefix, since=since, force=force, types=types
    )
    done = 0
    for position, step in enumerate(steps):
        item = step.item
        key = {"type": item.type_name, "id": str(item.pk)}
        if step.action is None:
            report.conflicts.append({**key, "reason": step.reason})
            continue
        if done >= limit:
            report.remaining = sum(1 for s in steps[position:] if s.action is not None)
            break
        done += 1
        before = history.latest_version(item)
        try:
            with transaction.atomic():
                _carry_out(owner, step, actor)
        except TiddlyError as exc:
            report.conflicts.append({**key, "reason": exc.message})
            continue
        if step.action == TRASH:
            report.trashed.append(key)
        elif (after := history.latest_version(item)) > before:  # else it already matched
            report.reverted.append({**key, "version": after})
    return report


def summarize(steps: list[Step]) -> dict[str, Any]:
    """A dry run's answer: how many items the whole revert would revert, trash and leave."""
    counts = {REVERT: 0, TRASH: 0, None: 0}
    for step in steps:
        counts[step.action] += 1
    return {
        "dry_run": True,
        "reverted": counts[REVERT],
        "trashed": counts[TRASH],
        "conflicts": counts[None],
    }


def _touched(
    owner: Owner, token_prefix: str, since: datetime, types: list[str] | None
) -> list[_Touched]:
    rows = (
        ItemVersion.objects.filter(
            owner_id=owner.pk,
            item_type__in=item_types.type_names() if types is None else types,
            token_prefix=token_prefix,
            created_at__gte=since,
            version__isnull=False,
        )
        .values("item_type", "item_id")
        .annotate(first=Min("version"), last=Max("version"), first_at=Min("created_at"))
        .order_by("first_at", "item_id")
    )
    return [_Touched(r["item_type"], r["item_id"], r["first"], r["last"]) for r in rows]


def _items(owner: Owner, chunk: list[_Touched]) -> dict[tuple[str, str], Item]:
    registry = item_types.registry()
    found: dict[tuple[str, str], Item] = {}
    for type_name in {entry.item_type for entry in chunk}:
        model = registry.get(type_name)
        if model is None:
            continue
        ids = [entry.item_id for entry in chunk if entry.item_type == type_name]
        for item in model.objects.filter(owner_id=owner.pk, pk__in=ids).defer("content"):
            found[(type_name, str(item.pk))] = item
    return found


def _rows(owner: Owner, chunk: list[_Touched]) -> dict[str, list[_Row]]:
    """Every versioned history row of the chunk's items, oldest first, by item id."""
    rows: dict[str, list[_Row]] = {}
    found = (
        ItemVersion.objects.filter(
            owner_id=owner.pk, item_id__in=[entry.item_id for entry in chunk]
        )
        .exclude(version__isnull=True)
        .order_by("item_id", "version")
        .values_list("item_id", "version", "action", "source", "token_prefix")
    )
    for item_id, version, action, source, prefix in found:
        if version is not None:  # excluded above; the type does not know
            rows.setdefault(str(item_id), []).append(_Row(version, action, source, prefix))
    return rows


def _step(
    item: Item, entry: _Touched, rows: list[_Row], token_prefix: str, force: bool
) -> Step | None:
    """The step for one item, or None when there is nothing (more) to do."""
    by_version = {row.version: row for row in rows}
    others = [
        row
        for row in rows
        if row.version > entry.first
        and row.token_prefix != token_prefix
        and row.source != REVERT_SOURCE
    ]
    first_row = by_version.get(entry.first)
    if first_row is not None and first_row.action == HistoryAction.CREATE:
        if item.is_deleted:
            return None
        if others and not force:
            return Step(item, None, reason=_others_reason(others))
        return Step(item, TRASH)
    target = entry.first - 1
    if target not in by_version:
        return Step(item, None, reason=f"Version {target} is no longer in the history (pruned).")
    if item.is_deleted:
        return Step(item, None, reason="It is in the trash; restore it from the trash first.")
    if _already_reverted(rows, entry):
        return None
    if others and not force:
        return Step(item, None, reason=_others_reason(others))
    return Step(item, REVERT, version=target)


def _others_reason(others: list[_Row]) -> str:
    return (
        f"Changed by someone else after the token's first change ({len(others)} version(s), "
        f"the latest is version {others[-1].version}); left as it is. Revert with force to "
        "overwrite."
    )


def _already_reverted(rows: list[_Row], entry: _Touched) -> bool:
    """Whether the item's latest version is a revert made after the token's last change in the
    window: with no one else's change since (checked next), that revert put it back already.
    Reading rows, not contents, is what lets a repeated batch skip done items at no cost."""
    latest = rows[-1] if rows else None
    return latest is not None and latest.source == REVERT_SOURCE and latest.version > entry.last


def _carry_out(owner: Owner, step: Step, actor: Actor) -> None:
    ref = ItemRef(type(step.item), pk=step.item.pk)
    if step.action == TRASH:
        services.trash_item(owner=owner, ref=ref, actor=actor)
    else:
        assert step.version is not None
        services.restore_version(owner=owner, ref=ref, version=step.version, actor=actor)
