"""Marking items for the meaning index (SPEC §16), where every recorded change passes.

``record_version``/``record_created_versions`` call ``mark`` in the write's transaction: an
upserted ``SearchDirty`` row, nothing more (the task workers' poller in
``content.search.indexing`` sees the marked rows and queues the indexing). A permanent
delete erases the item's vectors with it. ``changed`` records, in the transaction that replaces
or removes vectors, which items' vectors changed: the processes' indexes follow that log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from content.models import Item
from content.models.search import SearchChange, SearchChunk, SearchDirty

# One item's mark, the statement every single write runs: written out, as the ORM's upsert
# costs several times its execution to build.
_MARK_ONE = (
    f'INSERT INTO "{SearchDirty._meta.db_table}" (owner_id, item_type, item_id, marked_at) '
    "VALUES (%s, %s, %s, %s) ON CONFLICT (item_id, item_type) DO UPDATE SET "
    "marked_at = excluded.marked_at"
)


def mark_dirty(*, owner_id: Any, item_type: str, item_ids: Iterable[Any]) -> None:
    now = timezone.now()
    ids = list(item_ids)
    if len(ids) == 1:
        item_id = SearchDirty._meta.get_field("item_id").get_db_prep_value(ids[0], connection)
        marked_at = SearchDirty._meta.get_field("marked_at").get_db_prep_value(now, connection)
        with connection.cursor() as cursor:
            cursor.execute(_MARK_ONE, [owner_id, item_type, item_id, marked_at])
        return
    rows = [
        SearchDirty(owner_id=owner_id, item_type=item_type, item_id=i, marked_at=now) for i in ids
    ]
    if not rows:
        return
    SearchDirty.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["item_id", "item_type"],
        update_fields=["marked_at"],
        batch_size=500,
    )


def mark(items: Sequence[Item]) -> None:
    """Mark ``items`` (any owners and types) for indexing."""
    by_key: dict[tuple[Any, str], list[Any]] = {}
    for item in items:
        by_key.setdefault((item.owner_id, item.type_name), []).append(item.pk)
    for (owner_id, type_name), ids in by_key.items():
        mark_dirty(owner_id=owner_id, item_type=type_name, item_ids=ids)


def erase(item_type: str, item_id: Any) -> None:
    """A permanent delete: the item's vectors and mark go with it, in its transaction."""
    chunks = SearchChunk.objects.filter(item_id=item_id, item_type=item_type)
    owners = set(chunks.values_list("owner_id", flat=True)[:1])
    chunks.delete()
    SearchDirty.objects.filter(item_id=item_id, item_type=item_type).delete()
    for owner_id in owners:
        changed(owner_id, [(item_type, item_id)])


#: Seconds of change log kept: a process's index that has not read the log for half of it is
#: rebuilt (content.search.semantic.RETENTION).
RETENTION = 3600


def changed(owner_id: Any, keys: Iterable[tuple[str, Any]]) -> None:
    """The vectors of the owner's items ``keys`` were replaced or removed (in the caller's
    transaction): every process's index picks them up on its next search. Prunes the owner's
    log older than ``RETENTION``."""
    now = timezone.now()
    rows = [SearchChange(owner_id=owner_id, item_type=t, item_id=i, at=now) for t, i in keys]
    SearchChange.objects.bulk_create(rows, batch_size=1000)
    SearchChange.objects.filter(
        owner_id=owner_id, at__lt=now - timedelta(seconds=RETENTION)
    ).delete()
