"""Every JSON body an item or a result takes, typed, and the builders of the item shapes.

One place for the objects REST, MCP, conflicts, history and the export formats show: the
TypedDicts below are the contract (the MCP servers publish them as ``outputSchema``; the DRF
serializers in ``content.api.serializers`` describe the same shapes for OpenAPI, and a test
checks real bodies against the served schema), and the builders here are the only code that
turns an item into one. Built by hand rather than with DRF serializers because it runs on every
response (a serializer per item cost more than the query).

No ``from __future__ import annotations`` in this module: TypedDict decides which keys are
``NotRequired`` when the class is created and cannot see through string annotations (pydantic,
which turns these into MCP output schemas, needs the real types too).
"""

import re
from datetime import UTC, datetime
from typing import Any, cast, overload

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist

from content.models import Bookmark, Item, Share, share_url
from content.outcomes import EditOutcome
from content.shape_types import (
    Argument,
    Capture,
    ChangeData,
    ChangeFeed,
    ContentItem,
    ContentMetadata,
    ContentPage,
    Context,
    EditMatch,
    EditResult,
    ExportItem,
    FilterExpression,
    FilterGroup,
    FilterList,
    HistoryEntry,
    HistoryPage,
    HistoryRecord,
    ItemData,
    ItemEditResult,
    Link,
    ListedContentItem,
    ListedItemData,
    ListedPromptItem,
    Match,
    PromptEditResult,
    PromptItem,
    PromptPage,
    PromptRestoreResult,
    PromptTemplate,
    PromptWriteResult,
    RelatedByMeaning,
    RelatedItem,
    RelatedList,
    RestoreResult,
    SavedFilter,
    SearchMatch,
    SearchResult,
    ShareLink,
    TagCount,
    TagList,
    UpdateResult,
    Version,
)
from content.text.lines import LineWindow, count_lines

__all__ = [
    "Argument",
    "Capture",
    "ChangeData",
    "ChangeFeed",
    "ContentItem",
    "ContentMetadata",
    "ContentPage",
    "Context",
    "EditMatch",
    "EditResult",
    "ExportItem",
    "FilterExpression",
    "FilterGroup",
    "FilterList",
    "HistoryEntry",
    "HistoryPage",
    "HistoryRecord",
    "ItemData",
    "ItemEditResult",
    "Link",
    "ListedContentItem",
    "ListedItemData",
    "ListedPromptItem",
    "Match",
    "PromptEditResult",
    "PromptItem",
    "PromptPage",
    "PromptRestoreResult",
    "PromptTemplate",
    "PromptWriteResult",
    "RelatedByMeaning",
    "RelatedItem",
    "RelatedList",
    "RestoreResult",
    "SavedFilter",
    "SearchMatch",
    "SearchResult",
    "ShareLink",
    "TagCount",
    "TagList",
    "UpdateResult",
    "Version",
]

PREVIEW_CHARS = 500
_WHITESPACE = re.compile(r"\s+")
DATE_FIELDS = ("created_at", "updated_at", "last_used_at", "archived_at", "deleted_at")


# --- builders -----------------------------------------------------------------------------------


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


def iso(value: datetime | None) -> str | None:
    """``dt`` of the moment in UTC (exports: whatever zone the value came in)."""
    return None if value is None else dt(value.astimezone(UTC))


def _base(item: Item, content_length: int | None) -> ItemData:
    """The keys every item shape has, then the type's own fields (``url``; ``name``,
    ``arguments``: named by the model, so set by name) and ``content_length``."""
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
        "share": share_data(item),
    }
    for name in item.extra_fields:
        data[name] = getattr(item, name)
    if isinstance(item, Bookmark):
        data["capture"] = capture_data(item)
    data["content_length"] = content_length
    return cast(ItemData, data)


def share_data(item: Item) -> ShareLink | None:
    """The item's share link: from the list query's columns when it has them (a constant number
    of queries per page), else one indexed lookup."""
    if item.known_unshared:
        return None
    if hasattr(item, "share_token"):
        # Annotations the list query adds (queries.lists._share_columns), not model fields.
        token = getattr(item, "share_token")  # noqa: B009
        created_at, origin = getattr(item, "share_created_at"), getattr(item, "share_origin")  # noqa: B009
    else:
        row = (
            Share.objects.filter(item_type=item.type_name, item_id=item.pk)
            .values_list("token", "created_at", "origin")
            .first()
        )
        token, created_at, origin = row if row is not None else (None, None, "")
    if token is None:
        return None
    return {"url": share_url(token, origin), "created_at": dt(created_at)}


def capture_data(item: Bookmark) -> Capture | None:
    """The bookmark's ``capture`` (``None``: never asked). Lists prefetch it."""
    try:
        capture = item.capture
    except ObjectDoesNotExist:
        return None
    if capture is None:
        return None
    return {
        "status": capture.status,
        "requested_at": dt(capture.requested_at),
        "finished_at": dt(capture.finished_at),
        "attempts": capture.attempts,
        "http_status": capture.http_status,
        "content_type": capture.content_type or None,
        "final_url": capture.final_url or None,
        "error": capture.error or None,
    }


def window_data(window: LineWindow) -> ContentMetadata:
    return {
        "total_lines": window.total_lines,
        "start_line": window.start_line,
        "end_line": window.end_line,
        "is_partial": window.is_partial,
    }


def item_data(item: Item, *, window: LineWindow | None = None) -> ItemData:
    """The full item. ``window`` (a LineWindow) cuts ``content`` for a partial read."""
    content = item.content
    data = _base(item, None if content is None else len(content))
    if window is not None:
        data["content"] = window.content
        data["content_metadata"] = window_data(window)
    else:
        data["content"] = content
        data["content_metadata"] = None if content is None else _whole(content)
    return data


def _whole(content: str) -> ContentMetadata:
    total = count_lines(content)
    return {"total_lines": total, "start_line": 1, "end_line": total, "is_partial": False}


def listed_item_data(
    item: Item, *, score: float | None = None, match: SearchMatch | None = None
) -> ListedItemData:
    """A list entry: no content, but its length and a whitespace-collapsed preview (+ the
    ``score`` and ``match`` of a ranked search)."""
    base = _base(item, getattr(item, "content_length", None))
    data: ListedItemData = {**base, "content_preview": preview(getattr(item, "content_head", None))}
    if score is not None:
        data["score"] = score
    if match is not None:
        data["match"] = match
    return data


def metadata_item_data(item: Item) -> ItemData:
    """The full item without its content: length, a 500-character preview and the line count."""
    data = item_data(item)
    content = data.pop("content", None)
    data["content_preview"] = preview(content)
    return data


def prompt_item(data: ItemData) -> PromptItem:
    """A prompt's item shape: the model's ``extra_fields`` always put ``name`` and
    ``arguments`` in (which ``ItemData``, built for any type, can only declare optional)."""
    if "name" not in data or "arguments" not in data:
        raise ValueError("not the item shape of a prompt")
    return cast(PromptItem, data)


def listed_prompt_item(data: ListedItemData) -> ListedPromptItem:
    """``prompt_item`` for a list entry (which may carry ``score`` and ``match``)."""
    prompt_item(data)  # checks the prompt's fields are there
    return cast(ListedPromptItem, data)


def preview(content: str | None) -> str | None:
    """The first 500 characters with whitespace runs collapsed (lists, MCP metadata)."""
    if content is None:
        return None
    return _WHITESPACE.sub(" ", content[:PREVIEW_CHARS]).strip()


def export_item(item: Item, *, with_content: bool) -> ExportItem:
    """An item as the export formats write it (tags must be prefetched: no query).

    Keys in the order the Tiddly JSON format documents: content (when carried) before tags, the
    type's own fields, then the dates. Built as a plain dict (the type's own fields are named by
    the model) and declared an ``ExportItem`` once it holds every key."""
    data: dict[str, Any] = {
        "type": item.type_name,
        "id": str(item.pk),
        "title": item.title,
        "description": item.description,
    }
    if with_content:
        data["content"] = item.content
    data["tags"] = item.tag_names()
    for name in item.extra_fields:
        data[name] = getattr(item, name)
    for name in DATE_FIELDS:
        data[name] = iso(getattr(item, name))
    return cast(ExportItem, data)


def edit_data(outcome: EditOutcome) -> EditResult:
    """The answer to an edit (SPEC §4.3): the match of the one edit (with ``replacements`` for
    replace_all) or one entry per edit of ``edits``, and the dry run's diff."""
    item_id, updated_at = str(outcome.item.pk), dt(outcome.item.updated_at)
    data: EditResult
    if outcome.batch:
        edits: list[EditMatch] = [
            {"match_type": r.match_type, "line": r.line, "replacements": r.replacements}
            for r in outcome.results
        ]
        data = {"edits": edits, "id": item_id, "updated_at": updated_at}
    elif outcome.replace_all:
        data = {
            "match_type": outcome.match_type,
            "line": outcome.line,
            "replacements": outcome.replacements,
            "id": item_id,
            "updated_at": updated_at,
        }
    else:
        data = {
            "match_type": outcome.match_type,
            "line": outcome.line,
            "id": item_id,
            "updated_at": updated_at,
        }
    if outcome.dry_run:
        data["dry_run"] = True
        data["diff"] = outcome.diff or ""
        data["diff_truncated"] = outcome.diff_truncated
    return data


def etag(item: Item) -> str:
    return f'"{int(item.updated_at.timestamp() * 1_000_000)}"'


def markdown_head(item: Item) -> str:
    """What an item's Markdown (an MCP resource, a share's ``.md``) puts before its content: a
    ``# title`` line and, for a type with a URL, the URL."""
    title = item.display_title() or str(item.pk)
    head = f"# {title}\n\n"
    url = getattr(item, "url", None)
    return f"{head}<{url}>\n\n" if url else head


def item_markdown(item: Item) -> str:
    """The item as one Markdown document: ``markdown_head`` then the content."""
    return markdown_head(item) + (item.content or "")


def conflict_state(item: Item) -> dict[str, Any]:
    """``server_state`` of a 409/412 (SPEC §3.4): the full item while its content is at most
    ``TIDDLY_CONFLICT_CONTENT_CHARS``; past that, everything but ``content`` (with
    ``content_length``, ``content_metadata`` and ``content_omitted``), so a stale write against a
    100 000-line note does not answer with megabytes."""
    data: dict[str, Any] = dict(item_data(item))
    content = item.content
    if content is not None and len(content) > settings.TIDDLY_CONFLICT_CONTENT_CHARS:
        del data["content"]
        data["content_omitted"] = True
    return data
