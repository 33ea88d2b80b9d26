"""Version history (SPEC §6): recording, reconstruction and retention.

Recording: services call ``record_version`` after a real content/metadata change and
``record_event`` after a state change. Both run inside the caller's transaction, under the item's
row lock, so version numbers are dense (the unique constraint backs that up) and a failed write
records nothing.

Storage: the item row holds the newest content. Each versioned row stores a *reverse* patch
(version N → N-1) and, now and then, a full snapshot of its own content:

* on create (version 1);
* when the patches stored since the last snapshot add up to more than the content itself, so that
  reaching any version never costs more than about two copies of the document plus one patch;
* every ``TIDDLY_HISTORY_SNAPSHOT_EVERY`` versions, to bound the number of patches to apply.

Reconstruction of version v starts at the nearest snapshot at or above v (or at the current
content) and applies reverse patches downwards. Because a version depends only on *newer* rows,
retention can drop the oldest versions freely: it always removes a prefix of the version numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Max, Min, Q, QuerySet
from django.utils import timezone

from content import bulk, item_types
from content.history import changes as changelog
from content.history.codec import Patch, apply_patch, make_patch
from content.history.diff import MAX_DIFF_CHARS, TextDiff, unified_diff
from content.models import HistoryAction, Item, ItemVersion
from content.search import marks as search_marks
from tiddly import compiled
from tiddly.errors import NotFound

# Opportunistic pruning runs on every PRUNE_EVERY-th version of an item (cheap: two queries).
PRUNE_EVERY = 10
# The largest version number a request may ask for (the column is a 32-bit integer).
MAX_VERSION = 2**31 - 1


@dataclass(frozen=True)
class Actor:
    """Who made a change: the interface (`source`) and the API token's display prefix, if any."""

    source: str = "api"
    token_prefix: str | None = None


MAX_SOURCE_LENGTH = 40


def clean_source(raw: str | None, default: str = "api") -> str:
    """A client-supplied X-Request-Source, trimmed, lower-cased and bounded; printable only."""
    if not raw:
        return default
    cleaned = "".join(ch for ch in raw.strip().lower() if ch.isprintable())[:MAX_SOURCE_LENGTH]
    return cleaned.strip() or default


def metadata_snapshot(item: Item, tag_names: list[str] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {field: getattr(item, field) for field in item.metadata_fields}
    data["tags"] = tag_names if tag_names is not None else item.tag_names()
    return data


def item_versions(item: Item) -> QuerySet:
    """All history rows (versions and events) of one item."""
    return ItemVersion.objects.filter(item_type=item.type_name, item_id=item.pk)


# --- recording ----------------------------------------------------------------------------------


def record_version(
    *,
    item: Item,
    action: str,
    changed_fields: list[str],
    actor: Actor,
    tag_names: list[str],
    previous_content: str | None = None,
    patch: Patch | None = None,
) -> ItemVersion:
    """Record version N+1 of ``item`` (already saved with its new content).

    ``patch`` turns the new content back into the previous one; pass it when the edit span is known
    (str-replace), otherwise ``previous_content`` is diffed. Both are ignored on ``create``.
    """
    # A new item (a fresh id) has no history to read.
    chain = _NO_CHAIN if action == HistoryAction.CREATE else _chain_state(item)
    number = chain.latest + 1
    row = history_row(item, actor, action=action, version=number, tag_names=tag_names)
    row.changed_fields = sorted(changed_fields)
    row.created_at = item.updated_at
    # The first version's content is the item's own until an edit records version 2 (with the
    # patch back to it), so it needs no copy of its own.
    if "content" in changed_fields and chain.latest > 0:
        row.content_patch = patch if patch is not None else _patch(item.content, previous_content)
        if _needs_snapshot(item.content, number, chain, len(row.content_patch)):
            row.content_snapshot = item.content
    compiled.insert(row)
    changelog.record_changes([_change(item, action, actor.source, number, row.changed_fields)])
    search_marks.mark([item])
    if number % PRUNE_EVERY == 0:
        prune_item(item.type_name, item.pk, latest=number)
    return row


def filled_fields(item: Item, tag_names: list[str]) -> list[str]:
    """What a create sets: the fields with a value (a new item's "changed" fields)."""
    fields = ("title", "description", "content", *item.metadata_fields)
    filled = [f for f in dict.fromkeys(fields) if getattr(item, f) not in (None, "", [])]
    return filled + (["tags"] if tag_names else [])


def record_created_versions(
    items: Sequence[Item],
    *,
    actor: Actor,
    tag_names_by_id: Mapping[Any, list[str]],
    at: datetime | None = None,
) -> None:
    """Record version 1 of many new items at once, as ``record_version`` does for one create.

    For bulk creates (imports): the items are already inserted and have no history yet, so there
    is no chain to read and nothing to prune — one bulk insert for the lot. ``at`` is when the
    versions were recorded (default: each item's ``updated_at``, as for a single create).
    """
    rows = []
    for item in items:
        names = sorted(tag_names_by_id.get(item.pk, ()))
        row = history_row(item, actor, action=HistoryAction.CREATE, version=1, tag_names=names)
        row.changed_fields = sorted(filled_fields(item, names))
        row.created_at = at or item.updated_at
        rows.append(row)
    bulk.insert_objects(ItemVersion, rows)
    changelog.record_changes(
        [
            _change(item, HistoryAction.CREATE, actor.source, 1, row.changed_fields)
            for item, row in zip(items, rows, strict=True)
        ]
    )
    search_marks.mark(items)


def record_event(*, item: Item, action: str, actor: Actor) -> ItemVersion:
    if action in changelog.CHANGE_OF_HISTORY_ACTION:
        changelog.record_changes([_change(item, action, actor.source, None, [])])
    row = history_row(item, actor, action=action, version=None, tag_names=None)
    compiled.insert(row)
    return row


def history_row(
    item: Item, actor: Actor, *, action: str, version: int | None, tag_names: list[str] | None
) -> ItemVersion:
    """An unsaved history row of ``item``: what every version and event row shares."""
    return ItemVersion(
        owner_id=item.owner_id,
        item_type=item.type_name,
        item_id=item.pk,
        version=version,
        action=action,
        metadata=metadata_snapshot(item, tag_names),
        content_is_null=item.content is None,
        source=actor.source,
        token_prefix=actor.token_prefix,
    )


def erase(item: Item, *, source: str = "api") -> None:
    """Erase the item's history (a permanent delete); the change feed keeps a ``purged``."""
    item_versions(item).delete()
    changelog.record_changes([_change(item, changelog.PURGED, source, None, [])])
    search_marks.erase(item.type_name, item.pk)


def _change(
    item: Item, action: str, source: str, version: int | None, changed_fields: list[str]
) -> changelog.ChangeRecord:
    return changelog.ChangeRecord(
        owner_id=item.owner_id,
        item_type=item.type_name,
        item_id=item.pk,
        action=changelog.CHANGE_OF_HISTORY_ACTION.get(action, action),
        name=getattr(item, item.name_field) if item.name_field else None,
        version=version,
        changed_fields=changed_fields,
        source=source,
    )


@dataclass(frozen=True)
class _Chain:
    latest: int  # 0 = no version recorded yet
    last_snapshot: int  # 0 = none kept
    patch_chars: int  # stored patch characters above last_snapshot


_NO_CHAIN = _Chain(0, 0, 0)


def _chain_state(item: Item) -> _Chain:
    """Everything record_version needs to know about the existing history, in one query.

    Hand-written SQL: this runs inside every edit, and building the equivalent ORM aggregate
    (conditional aggregates around a subquery) costs more than running it.
    """
    item_id = ItemVersion._meta.get_field("item_id").get_db_prep_value(item.pk, connection)
    with connection.cursor() as cursor:
        cursor.execute(_CHAIN_SQL, [item.type_name, item_id] * 2)
        latest, last_snapshot, patch_chars = cursor.fetchone()
    return _Chain(latest or 0, last_snapshot or 0, patch_chars or 0)


_TABLE = ItemVersion._meta.db_table
_CHAIN_SQL = f"""
SELECT MAX(version),
       MAX(CASE WHEN content_snapshot IS NOT NULL THEN version END),
       SUM(CASE WHEN version > COALESCE(
               (SELECT MAX(version) FROM {_TABLE}
                WHERE item_type = %s AND item_id = %s AND content_snapshot IS NOT NULL), 0)
           THEN LENGTH(content_patch) END)
FROM {_TABLE}
WHERE item_type = %s AND item_id = %s AND version IS NOT NULL
"""


def _patch(new: str | None, old: str | None) -> Patch:
    return make_patch(new or "", old or "")


def _needs_snapshot(content: str | None, number: int, chain: _Chain, patch_chars: int) -> bool:
    """Store a full copy when replaying patches to reach this version would cost more than one.

    Small single-line edits of a large document therefore cost only their patches, while a run
    of large rewrites gets a snapshot about every time its patches add up to one document.
    """
    if content is None:
        return False
    if number - chain.last_snapshot >= settings.TIDDLY_HISTORY_SNAPSHOT_EVERY:
        return True
    return chain.patch_chars + patch_chars > len(content)


# --- retention ----------------------------------------------------------------------------------


def _cutoff_time(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(days=settings.TIDDLY_HISTORY_DAYS)


def _prune_through(latest: int, newest_old: int | None) -> int:
    """The highest version to drop: beyond the newest N, or old — but never the newest one.

    Everything at or below the returned number goes, so what is dropped is always a prefix of
    the version numbers and no remaining version loses a patch it needs.
    """
    beyond_count = latest - settings.TIDDLY_HISTORY_MAX_VERSIONS
    return min(max(beyond_count, newest_old or 0), latest - 1)


def prune_item(
    item_type: str, item_id: Any, *, latest: int | None = None, now: datetime | None = None
) -> int:
    """Apply the retention rules to one item's history; returns the number of rows deleted."""
    cutoff = _cutoff_time(now)
    rows = ItemVersion.objects.filter(item_type=item_type, item_id=item_id)
    state = rows.filter(version__isnull=False).aggregate(
        latest=Max("version"), newest_old=Max("version", filter=Q(created_at__lt=cutoff))
    )
    latest = state["latest"] if latest is None else latest
    through = _prune_through(latest or 0, state["newest_old"])
    doomed = Q(version__isnull=True, created_at__lt=cutoff)
    if through > 0:
        doomed |= Q(version__lte=through)
    deleted, _ = rows.filter(doomed).delete()
    return deleted


@dataclass
class PruneReport:
    items: int = 0
    versions: int = 0
    events: int = 0
    orphans: int = 0


def prune_all(*, now: datetime | None = None) -> PruneReport:
    """Apply retention to every item's history, and drop history of items that no longer exist."""
    report = PruneReport()
    cutoff = _cutoff_time(now)
    report.orphans = _delete_orphans()
    report.events, _ = ItemVersion.objects.filter(
        version__isnull=True, created_at__lt=cutoff
    ).delete()
    over = (
        ItemVersion.objects.filter(version__isnull=False)
        .values("item_type", "item_id")
        .annotate(
            oldest=Min("version"),
            latest=Max("version"),
            newest_old=Max("version", filter=Q(created_at__lt=cutoff)),
        )
        .filter(
            Q(oldest__lte=F("latest") - settings.TIDDLY_HISTORY_MAX_VERSIONS)
            | Q(oldest__lte=F("newest_old")),
            oldest__lt=F("latest"),
        )
        .order_by()
    )
    for group in list(over):
        through = _prune_through(group["latest"], group["newest_old"])
        deleted, _ = ItemVersion.objects.filter(
            item_type=group["item_type"], item_id=group["item_id"], version__lte=through
        ).delete()
        report.items += 1
        report.versions += deleted
    return report


def _delete_orphans() -> int:
    deleted = 0
    for type_name, model in item_types.registry().items():
        count, _ = (
            ItemVersion.objects.filter(item_type=type_name)
            .exclude(item_id__in=model.objects.values("pk"))
            .delete()
        )
        deleted += count
    return deleted


# --- reading ------------------------------------------------------------------------------------


def get_version(item: Item, number: int) -> ItemVersion:
    """The versioned row ``number`` without its stored content; NotFound if absent or pruned."""
    row = None
    if 1 <= number <= MAX_VERSION:
        row = (
            item_versions(item)
            .defer("content_patch", "content_snapshot")
            .filter(version=number)
            .first()
        )
    if row is None:
        raise _version_not_found(item, number)
    return row


def latest_version(item: Item) -> int:
    return item_versions(item).aggregate(n=Max("version"))["n"] or 0


def _version_not_found(item: Item, number: int) -> NotFound:
    kept = (
        item_versions(item)
        .filter(version__isnull=False)
        .aggregate(low=Min("version"), high=Max("version"))
    )
    where = (
        f"Versions {kept['low']} to {kept['high']} are kept."
        if kept["high"]
        else "It has no recorded versions."
    )
    return NotFound(
        f"Version {number} of this {item.type_name} is not in its history (versions start at 1; "
        f"old ones are pruned). {where} List them with GET …/history/."
    )


def previous_row(item: Item, number: int) -> ItemVersion | None:
    """Version ``number - 1`` (None for version 1 or when it has been pruned)."""
    if number <= 1:
        return None
    return (
        item_versions(item)
        .defer("content_patch", "content_snapshot")
        .filter(version=number - 1)
        .first()
    )


@dataclass(frozen=True)
class Reconstruction:
    content: str | None  # the version's content
    previous: str | None  # the content just before it; None for version 1


def reconstruct(item: Item, version: int) -> str | None:
    """The exact content of ``item`` at ``version`` (None when it was null)."""
    return reconstruct_with_previous(item, version, previous=False).content


def reconstruct_with_previous(item: Item, version: int, *, previous: bool = True) -> Reconstruction:
    """The content at ``version`` and just before it (even if that version was pruned).

    Starts at the nearest snapshot at or above ``version`` — or at the item's current content —
    and applies reverse patches downwards. Reads under the item's row lock so the current content
    and the history rows are consistent even while an edit is committing.
    """
    if not 1 <= version <= MAX_VERSION:
        raise _version_not_found(item, version)
    model = type(item)
    with transaction.atomic():
        model.objects.select_for_update().filter(pk=item.pk).values_list("pk").first()
        rows = item_versions(item).filter(version__isnull=False)
        base = (
            rows.filter(version__gte=version, content_snapshot__isnull=False)
            .order_by("version")
            .values_list("version", "content_snapshot")
            .first()
        )
        rows = rows.filter(version__gte=version - 1 if previous else version)
        if base is not None:
            rows = rows.filter(version__lte=base[0])
        chain = list(
            rows.order_by("-version").values_list("version", "content_patch", "content_is_null")
        )
        if base is None and chain and chain[0][0] >= version:
            current = model.objects.filter(pk=item.pk).values_list("content", flat=True).first()
            base = (chain[0][0], current)
    if base is None or not _is_dense(chain, version):
        raise _version_not_found(item, version)
    return _walk(item, chain, base[1] or "", version, previous=previous)


def _is_dense(chain: list[tuple[int, str | None, bool]], version: int) -> bool:
    newer = [number for number, _, _ in chain if number >= version]
    return bool(newer) and newer[-1] == version and len(newer) == newer[0] - version + 1


def _walk(
    item: Item,
    chain: list[tuple[int, str | None, bool]],
    text: str,
    version: int,
    *,
    previous: bool,
) -> Reconstruction:
    content: str | None = None
    before: str | None = None
    for number, patch, is_null in chain:
        if number == version:
            content = before = None if is_null else text
            if not previous:
                break
        elif number == version - 1:
            before = None if is_null else text
            break
        if patch is not None:
            text = _apply(item, text, patch, number)
            if number == version:
                before = text  # what it stays if version - 1 has been pruned
    return Reconstruction(content, None if version == 1 or not previous else before)


def _apply(item: Item, text: str, patch: str, number: int) -> str:
    try:
        return apply_patch(text, patch)
    except ValueError:
        raise NotFound(
            f"Version {number - 1} of this {item.type_name} cannot be reconstructed: its stored "
            "history does not fit the content (was the item changed outside Tiddly?). Newer "
            "versions may still be available."
        ) from None


@dataclass(frozen=True)
class VersionDiff:
    row: ItemVersion
    before_row: ItemVersion | None  # None for version 1, or when version - 1 has been pruned
    content_changed: bool
    diff: TextDiff


def version_diff(
    item: Item, number: int, *, context: int = 3, max_chars: int = MAX_DIFF_CHARS
) -> VersionDiff:
    """What version ``number`` changed: a bounded unified diff of the content, and both rows."""
    row = get_version(item, number)
    pair = reconstruct_with_previous(item, number)
    label = f"{item.type_name}/{item.pk}"
    diff = unified_diff(
        pair.previous or "",
        pair.content or "",
        old_label=f"{label} v{number - 1}" if number > 1 else "/dev/null",
        new_label=f"{label} v{number}",
        context=context,
        max_chars=max_chars,
    )
    return VersionDiff(row, previous_row(item, number), pair.previous != pair.content, diff)


def restore_data(item: Item, row: ItemVersion) -> dict[str, Any]:
    """The update that brings ``item`` back to ``row``'s version: its content and metadata.

    Keys an old snapshot lacks are left out, so they keep their current values.
    """
    restorable = (*item.metadata_fields, "tags")
    data = {key: value for key, value in row.metadata.items() if key in restorable}
    data["content"] = reconstruct(item, row.version or 0)
    return data
