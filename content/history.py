"""Recording version history inside the transaction of the change (SPEC §6).

Services call ``record_version`` after a real content/metadata change and ``record_event`` after a
state change. Both run inside the caller's transaction, under the item's row lock, so version
numbers are dense and a failed write records nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Max, Sum
from django.db.models.functions import Length

from content.history_codec import Patch, make_patch
from content.models import HistoryAction, Item, ItemVersion


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
    return cleaned or default


def metadata_snapshot(item: Item, tag_names: list[str] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {field: getattr(item, field) for field in item.metadata_fields}
    data["tags"] = tag_names if tag_names is not None else item.tag_names()
    return data


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
    latest = _latest_version(item)
    number = (latest or 0) + 1
    row = ItemVersion(
        owner_id=item.owner_id,
        item_type=item.type_name,
        item_id=item.pk,
        version=number,
        action=action,
        changed_fields=sorted(changed_fields),
        metadata=metadata_snapshot(item, tag_names),
        content_is_null=item.content is None,
        source=actor.source,
        token_prefix=actor.token_prefix,
        created_at=item.updated_at,
    )
    if action == HistoryAction.CREATE or latest is None:
        row.content_snapshot = item.content
    elif "content" in changed_fields:
        row.content_patch = patch if patch is not None else _patch(item.content, previous_content)
        if _needs_snapshot(item, number):
            row.content_snapshot = item.content
    row.save(force_insert=True)
    return row


def record_event(*, item: Item, action: str, actor: Actor) -> ItemVersion:
    return ItemVersion.objects.create(
        owner_id=item.owner_id,
        item_type=item.type_name,
        item_id=item.pk,
        version=None,
        action=action,
        metadata=metadata_snapshot(item),
        content_is_null=item.content is None,
        source=actor.source,
        token_prefix=actor.token_prefix,
    )


def erase(item: Item) -> None:
    ItemVersion.objects.filter(item_type=item.type_name, item_id=item.pk).delete()


def _latest_version(item: Item) -> int | None:
    return ItemVersion.objects.filter(item_type=item.type_name, item_id=item.pk).aggregate(
        n=Max("version")
    )["n"]


def _patch(new: str | None, old: str | None) -> Patch:
    return make_patch(new or "", old or "")


def _needs_snapshot(item: Item, number: int) -> bool:
    """Store a full copy when replaying patches to reach this version would cost more than one.

    A snapshot is taken every ``TIDDLY_HISTORY_SNAPSHOT_EVERY`` versions, or sooner when the
    patches stored since the last snapshot outweigh the content itself. Small single-line edits of
    a large document therefore cost only their patches.
    """
    if item.content is None:
        return False
    since = ItemVersion.objects.filter(
        item_type=item.type_name, item_id=item.pk, version__isnull=False
    )
    last_snapshot = (
        since.filter(content_snapshot__isnull=False).aggregate(n=Max("version"))["n"] or 0
    )
    if number - last_snapshot >= settings.TIDDLY_HISTORY_SNAPSHOT_EVERY:
        return True
    patch_chars = since.filter(version__gt=last_snapshot).aggregate(n=Sum(Length("content_patch")))[
        "n"
    ]
    return (patch_chars or 0) > len(item.content)
