"""Items as JSON: the one place an item becomes the object REST, MCP, conflicts and history show.

Built by hand rather than with DRF serializers because it runs on every response (a serializer
per item cost more than the query). ``content.api.serializers`` describes the same shapes for
OpenAPI, and a test checks real bodies against the served schema.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, overload

from content.models import Item
from content.text.lines import LineWindow, count_lines

if TYPE_CHECKING:
    from content.services import EditOutcome

PREVIEW_CHARS = 500
_WHITESPACE = re.compile(r"\s+")


@overload
def dt(value: datetime) -> str: ...
@overload
def dt(value: None) -> None: ...
def dt(value: datetime | None) -> str | None:
    """ISO 8601 with ``Z`` for UTC, as every timestamp in the API is written."""
    if value is None:
        return None
    text_value = value.isoformat()
    return text_value[:-6] + "Z" if text_value.endswith("+00:00") else text_value


def _base(item: Item) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": str(item.pk),
        "type": item.type_name,
        "title": item.title,
        "description": item.description,
        "tags": item.tag_names(),
        "state": item.state,
        "created_at": dt(item.created_at),
        "updated_at": dt(item.updated_at),
        "last_used_at": dt(item.last_used_at),
        "archived_at": dt(item.archived_at),
        "deleted_at": dt(item.deleted_at),
    }
    for name in item.extra_fields:
        data[name] = getattr(item, name)
    return data


def item_data(item: Item, *, window: LineWindow | None = None) -> dict[str, Any]:
    """The full item. ``window`` (a LineWindow) cuts ``content`` for a partial read."""
    data = _base(item)
    content = item.content
    data["content_length"] = None if content is None else len(content)
    if window is not None:
        data["content"] = window.content
        data["content_metadata"] = {
            "total_lines": window.total_lines,
            "start_line": window.start_line,
            "end_line": window.end_line,
            "is_partial": window.is_partial,
        }
    else:
        data["content"] = content
        data["content_metadata"] = None if content is None else _whole(content)
    return data


def _whole(content: str) -> dict[str, Any]:
    total = count_lines(content)
    return {"total_lines": total, "start_line": 1, "end_line": total, "is_partial": False}


def listed_item_data(item: Item) -> dict[str, Any]:
    """A list entry: no content, but its length and a whitespace-collapsed preview."""
    data = _base(item)
    head = getattr(item, "content_head", None)
    data["content_length"] = getattr(item, "content_length", None)
    data["content_preview"] = preview(head)
    return data


def metadata_item_data(item: Item) -> dict[str, Any]:
    """The full item without its content: length, a 500-character preview and the line count."""
    data = item_data(item)
    content = data.pop("content")
    data["content_preview"] = preview(content)
    return data


def preview(content: str | None) -> str | None:
    """The first 500 characters with whitespace runs collapsed (lists, MCP metadata)."""
    if content is None:
        return None
    return _WHITESPACE.sub(" ", content[:PREVIEW_CHARS]).strip()


def page_data(items: list[Item], total: int, offset: int) -> dict[str, Any]:
    """A list page as the MCP search tools return it."""
    return {
        "items": [listed_item_data(i) for i in items],
        "total": total,
        "has_more": offset + len(items) < total,
    }


def edit_data(outcome: EditOutcome) -> dict[str, Any]:
    """The answer to an edit (SPEC §4.3): the match of the one edit (with ``replacements`` for
    replace_all) or one entry per edit of ``edits``, and the dry run's diff."""
    data: dict[str, Any]
    if outcome.batch:
        data = {
            "edits": [
                {"match_type": r.match_type, "line": r.line, "replacements": r.replacements}
                for r in outcome.results
            ]
        }
    else:
        data = {"match_type": outcome.match_type, "line": outcome.line}
        if outcome.replace_all:
            data["replacements"] = outcome.replacements
    data["id"] = str(outcome.item.pk)
    data["updated_at"] = dt(outcome.item.updated_at)
    if outcome.dry_run:
        data.update(dry_run=True, diff=outcome.diff, diff_truncated=outcome.diff_truncated)
    return data


def etag(item: Item) -> str:
    return f'"{int(item.updated_at.timestamp() * 1_000_000)}"'
