"""Revert by token (SPEC §6): undo everything one API token changed since a time.

Each item the token changed in the window goes back to its version before the token's first
change there (one new version, source ``revert``); an item the token created goes to the trash.
An item someone else changed after the token's first change is a conflict and is left alone
unless ``force``. Earlier reverts don't count as someone else's change, and an item already in
its pre-token state is skipped, so repeating a revert changes nothing more.

``plan_revert`` decides without writing (the admin shows it on its confirmation page);
``revert_token`` carries the plan out in one transaction. The token's own state events (archive,
delete) are not undone: they do not change content and can be reversed from the trash/archive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Max, Min, Q

from content import history, item_types, services
from content.history import Actor
from content.models import HistoryAction, Item, ItemVersion
from content.reads import ItemRef, Owner
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

    def data(self) -> dict[str, list[dict[str, Any]]]:
        return {"reverted": self.reverted, "trashed": self.trashed, "conflicts": self.conflicts}


def plan_revert(
    *,
    owner: Owner,
    token_prefix: str,
    since: datetime,
    force: bool = False,
    types: list[str] | None = None,
) -> list[Step]:
    """What ``revert_token`` would do, item by item (oldest change first); writes nothing.

    ``types`` limits it to those item types (a caller may revert only what it may write).
    """
    touched = (
        ItemVersion.objects.filter(
            owner_id=owner.pk,
            item_type__in=item_types.type_names() if types is None else types,
            token_prefix=token_prefix,
            created_at__gte=since,
            version__isnull=False,
        )
        .values("item_type", "item_id")
        .annotate(first=Min("version"), first_at=Min("created_at"))
        .order_by("first_at")
    )
    steps = []
    for row in touched:
        item = _load(owner, row["item_type"], row["item_id"])
        if item is not None:
            step = _step(item, token_prefix, row["first"], force)
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
) -> RevertReport:
    """Undo the token's changes since ``since`` on the owner's items (see the module doc).

    All in one transaction. An item whose restore fails a check (its old URL or name is now
    taken, its template no longer validates) is reported as a conflict with that reason and left
    as it is; the other items are still reverted.
    """
    actor = Actor(source=REVERT_SOURCE, token_prefix=actor.token_prefix)
    report = RevertReport()
    steps = plan_revert(
        owner=owner, token_prefix=token_prefix, since=since, force=force, types=types
    )
    for step in steps:
        item = step.item
        key = {"type": item.type_name, "id": str(item.pk)}
        if step.action is None:
            report.conflicts.append({**key, "reason": step.reason})
            continue
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


def _load(owner: Owner, type_name: str, item_id: Any) -> Item | None:
    model = item_types.registry().get(type_name)
    if model is None:
        return None
    return model.objects.filter(owner_id=owner.pk, pk=item_id).defer("content").first()


def _step(item: Item, token_prefix: str, first: int, force: bool) -> Step | None:
    """The step for one item, or None when there is nothing (more) to do."""
    versions = history.item_versions(item).filter(version__isnull=False)
    others = versions.filter(version__gt=first).exclude(
        Q(token_prefix=token_prefix) | Q(source=REVERT_SOURCE)
    )
    changed_by_others = others.exists()
    first_row = versions.filter(version=first).only("action").first()
    if first_row is not None and first_row.action == HistoryAction.CREATE:
        if item.is_deleted:
            return None
        if changed_by_others and not force:
            return Step(item, None, reason=_others_reason(others))
        return Step(item, TRASH)
    target = first - 1
    if not versions.filter(version=target).exists():
        return Step(item, None, reason=f"Version {target} is no longer in the history (pruned).")
    if item.is_deleted:
        return Step(item, None, reason="It is in the trash; restore it from the trash first.")
    if _already_at(item, versions, target):
        return None
    if changed_by_others and not force:
        return Step(item, None, reason=_others_reason(others))
    return Step(item, REVERT, version=target)


def _others_reason(others: Any) -> str:
    count = others.count()
    last = others.aggregate(n=Max("version"))["n"]
    return (
        f"Changed by someone else after the token's first change ({count} version(s), the "
        f"latest is version {last}); left as it is. Revert with force to overwrite."
    )


def _already_at(item: Item, versions: Any, target: int) -> bool:
    """Whether the latest version is a revert back to ``target`` already (same content and
    metadata): comparing the version rows avoids reconstructing the content."""
    latest = versions.order_by("-version").first()
    if latest is None or latest.source != REVERT_SOURCE:
        return False
    restored = history.get_version(item, target)
    if latest.metadata != restored.metadata:
        return False
    return history.reconstruct(item, latest.version) == history.reconstruct(item, target)


def _carry_out(owner: Owner, step: Step, actor: Actor) -> None:
    ref = ItemRef(type(step.item), pk=step.item.pk)
    if step.action == TRASH:
        services.trash_item(owner=owner, ref=ref, actor=actor)
    else:
        assert step.version is not None
        services.restore_version(owner=owner, ref=ref, version=step.version, actor=actor)
