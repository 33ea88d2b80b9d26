"""An item's history as the read doors show it: pages of entries, one version, one diff."""

from __future__ import annotations

from typing import Any

from content import history
from content.models import Item, ItemVersion
from content.queries.items import line_window
from content.shapes import HistoryPage, HistoryRecord, Version, dt, window_data


def history_entry(row: ItemVersion) -> HistoryRecord:
    return {
        "id": str(row.pk),
        "version": row.version,
        "action": row.action,
        "changed_fields": row.changed_fields,
        "metadata": row.metadata,
        "source": row.source,
        "token_prefix": row.token_prefix,
        "created_at": dt(row.created_at),
    }


def history_page(
    item: Item,
    *,
    limit: int,
    offset: int,
    actions: list[str] | None = None,
    sources: list[str] | None = None,
) -> tuple[int, list[HistoryRecord]]:
    """Versions and events, newest first: (total, one page of entries)."""
    rows = history.item_versions(item).defer("content_patch", "content_snapshot")
    if actions:
        rows = rows.filter(action__in=actions)
    if sources:
        rows = rows.filter(source__in=[history.clean_source(x) for x in sources])
    total = rows.count()
    found = rows.order_by("-created_at", "-id")[offset : offset + limit]
    return total, [history_entry(row) for row in found]


def history_summary(item: Item, *, limit: int, offset: int) -> HistoryPage:
    """A history page as the MCP history tools return it (SPEC §7): the entries without their
    metadata snapshots, the total and whether more follow."""
    total, entries = history_page(item, limit=limit, offset=offset)
    return {
        "versions": [
            {
                "version": entry["version"],
                "action": entry["action"],
                "changed_fields": entry["changed_fields"],
                "source": entry["source"],
                "token_prefix": entry["token_prefix"],
                "created_at": entry["created_at"],
            }
            for entry in entries
        ],
        "total": total,
        "has_more": offset + len(entries) < total,
    }


def version_data(
    item: Item, number: int, *, start_line: int | None = None, end_line: int | None = None
) -> Version:
    """The item as it was at version ``number`` (content cut to the line window)."""
    row = history.get_version(item, number)
    window = line_window(history.reconstruct(item, number), start_line, end_line)
    return {
        "item_id": str(item.pk),
        "type": item.type_name,
        **history_entry(row),
        "content": None if window is None else window.content,
        "content_metadata": None if window is None else window_data(window),
    }


def diff_data(
    item: Item, number: int, *, context: int = 3, max_chars: int = history.MAX_DIFF_CHARS
) -> dict[str, Any]:
    """What version ``number`` changed: a bounded unified diff and the metadata before/after."""
    found = history.version_diff(item, number, context=context, max_chars=max_chars)
    return {
        "version": number,
        "previous_version": number - 1 if number > 1 else None,
        "action": found.row.action,
        "changed_fields": found.row.changed_fields,
        "content_changed": found.content_changed,
        "diff": found.diff.text,
        "truncated": found.diff.truncated,
        "lines_added": found.diff.added,
        "lines_removed": found.diff.removed,
        "before_metadata": found.before_row.metadata if found.before_row else None,
        "after_metadata": found.row.metadata,
    }
