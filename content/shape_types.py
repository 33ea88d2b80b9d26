"""The TypedDicts of every JSON body an item or a result takes (the contract; ``content.shapes``
re-exports them beside their builders).

No ``from __future__ import annotations``: TypedDict decides which keys are ``NotRequired`` when
the class is created and cannot see through string annotations (pydantic, which turns these into
MCP output schemas, needs the real types too).
"""

from typing import Any, NotRequired

from typing_extensions import TypedDict

# --- items --------------------------------------------------------------------------------------


class ContentMetadata(TypedDict):
    total_lines: int
    start_line: int
    end_line: int
    is_partial: bool


class Argument(TypedDict):
    name: str
    description: str | None
    required: bool


class RelatedItem(TypedDict):
    relationship_id: str
    type: str
    id: str
    title: str | None
    description: str | None


class ShareLink(TypedDict):
    """An item's public share link (SPEC §17.4)."""

    url: str
    created_at: str


class _Item(TypedDict):
    id: str
    type: str
    title: str | None
    description: str | None
    tags: list[str]
    state: str
    created_at: str
    updated_at: str
    last_used_at: str
    archived_at: str | None
    deleted_at: str | None
    share: ShareLink | None
    content_length: int | None
    content: NotRequired[str | None]
    content_metadata: NotRequired[ContentMetadata | None]
    content_preview: NotRequired[str | None]


class Capture(TypedDict):
    """A bookmark's page capture (SPEC §15); ``error`` starts with a fixed prefix."""

    status: str
    requested_at: str
    finished_at: str | None
    attempts: int
    http_status: int | None
    content_type: str | None
    final_url: str | None
    error: str | None


class ContentItem(_Item):
    """A bookmark or note as the REST API returns it.

    ``content`` and ``content_metadata`` come with full reads; ``content_preview`` with lists and
    metadata-only reads; ``url`` and ``capture`` with bookmarks; ``relationships`` with get_item.
    """

    url: NotRequired[str]
    capture: NotRequired[Capture | None]
    relationships: NotRequired[list[RelatedItem]]


class PromptItem(_Item):
    """A prompt as the REST API returns it (``content`` is its template)."""

    name: str
    arguments: list[Argument]


class ItemData(ContentItem):
    """What the builders return for any type: a ``ContentItem``, and for a prompt also its
    ``name`` and ``arguments`` (the model's ``extra_fields``)."""

    name: NotRequired[str]
    arguments: NotRequired[list[Argument]]


class SearchMatch(TypedDict):
    """Where a search result matched best (SPEC §16): ``start_line``/``end_line`` (1-based,
    inclusive, null off content) are exactly what a partial read takes."""

    field: str
    start_line: int | None
    end_line: int | None
    snippet: str
    highlights: list[list[int]]


class ListedContentItem(ContentItem):
    """A list entry; ``score`` and ``match`` come with ranked (hybrid, semantic) searches."""

    score: NotRequired[float]
    match: NotRequired[SearchMatch]


class ListedPromptItem(PromptItem):
    score: NotRequired[float]
    match: NotRequired[SearchMatch]


class ListedItemData(ItemData):
    """``listed_item_data`` for any type (a ``ListedContentItem``; a prompt's adds its fields)."""

    score: NotRequired[float]
    match: NotRequired[SearchMatch]


class RelatedByMeaning(TypedDict):
    """A neighbour by meaning (SPEC §16 related): ``linked`` = a §12 link joins the two."""

    type: str
    id: str
    title: str | None
    score: float
    linked: bool


class RelatedList(TypedDict):
    results: list[RelatedByMeaning]


class ContentPage(TypedDict):
    items: list[ListedContentItem]
    total: int
    has_more: bool
    degraded: NotRequired[bool]


class PromptPage(TypedDict):
    items: list[ListedPromptItem]
    total: int
    has_more: bool
    degraded: NotRequired[bool]


class ExportItem(TypedDict):
    """An item in an export (Tiddly JSON ``items``, a Markdown file's front matter): the item
    shape without state, lengths, previews and line counts; dates in UTC; ``content`` only
    where the format carries it in the record (JSON; Markdown has it as the file's body)."""

    type: str
    id: str
    title: str | None
    description: str | None
    content: NotRequired[str | None]
    tags: list[str]
    url: NotRequired[str]
    name: NotRequired[str]
    arguments: NotRequired[list[Argument]]
    created_at: str | None
    updated_at: str | None
    last_used_at: str | None
    archived_at: str | None
    deleted_at: str | None


# --- results ------------------------------------------------------------------------------------


class Match(TypedDict):
    field: str
    line: int | None
    context: str


class SearchResult(TypedDict):
    matches: list[Match]
    total_matches: int
    truncated: NotRequired[bool]


class EditMatch(TypedDict):
    match_type: str
    line: int
    replacements: int


class EditResult(TypedDict):
    """One edit: ``match_type``/``line`` (+ ``replacements`` with replace_all); ``edits``: one
    ``EditMatch`` per edit; dry runs add ``dry_run``, ``diff`` and ``diff_truncated``."""

    match_type: NotRequired[str]
    line: NotRequired[int]
    replacements: NotRequired[int]
    edits: NotRequired[list[EditMatch]]
    id: str
    updated_at: str
    dry_run: NotRequired[bool]
    diff: NotRequired[str]
    diff_truncated: NotRequired[bool]


class ItemEditResult(EditResult):
    """REST's str-replace answer: the edit result, and the whole item when asked for."""

    item: NotRequired[ItemData]


class UpdateResult(TypedDict):
    id: str
    updated_at: str
    summary: str


class PromptTemplate(TypedDict):
    id: str
    name: str
    title: str | None
    description: str | None
    content: str | None
    arguments: list[Argument]
    tags: list[str]
    updated_at: str
    content_metadata: ContentMetadata | None


class PromptWriteResult(TypedDict):
    id: str
    name: str
    updated_at: str
    summary: str


class PromptEditResult(TypedDict):
    id: str
    name: str
    updated_at: str
    match_type: NotRequired[str]
    line: NotRequired[int]
    replacements: NotRequired[int]
    edits: NotRequired[list[EditMatch]]
    dry_run: NotRequired[bool]
    diff: NotRequired[str]
    diff_truncated: NotRequired[bool]
    summary: str


class HistoryEntry(TypedDict):
    version: int | None
    action: str
    changed_fields: list[str]
    source: str
    token_prefix: str | None
    created_at: str


class HistoryRecord(HistoryEntry):
    """One row of an item's history as REST lists it (the MCP summary drops id and metadata)."""

    id: str
    metadata: dict[str, Any]


class HistoryPage(TypedDict):
    versions: list[HistoryEntry]
    total: int
    has_more: bool


class Version(TypedDict):
    """An item as it was at a version: content (cut to the line window) and metadata."""

    item_id: str
    type: str
    id: str
    version: int | None
    action: str
    changed_fields: list[str]
    metadata: dict[str, Any]
    source: str
    token_prefix: str | None
    created_at: str
    content: str | None
    content_metadata: ContentMetadata | None
    diff: NotRequired[str]
    diff_truncated: NotRequired[bool]


class RestoreResult(TypedDict):
    id: str
    updated_at: str
    version: int
    summary: str


class PromptRestoreResult(RestoreResult):
    name: str


class TagCount(TypedDict):
    name: str
    count: int


class TagList(TypedDict):
    tags: list[TagCount]


class FilterGroup(TypedDict):
    tags: list[str]


class FilterExpression(TypedDict):
    groups: list[FilterGroup]
    group_operator: str


class SavedFilter(TypedDict):
    id: str
    name: str
    content_types: list[str]
    expression: FilterExpression
    default_sort_by: str | None
    default_sort_order: str
    created_at: str
    updated_at: str


class FilterList(TypedDict):
    filters: list[SavedFilter]


class Context(TypedDict):
    markdown: str
    counts: dict[str, int]


class Link(TypedDict):
    id: str
    source_type: str
    source_id: str
    target_type: str
    target_id: str
    description: str | None
    created_at: str


# --- change feed ------------------------------------------------------------------------------


class ChangeData(TypedDict):
    """One change of the feed (SPEC §17.1)."""

    cursor: str
    type: str
    id: str
    name: NotRequired[str]
    action: str
    version: int | None
    changed_fields: list[str]
    source: str
    at: str


class ChangeFeed(TypedDict):
    changes: list[ChangeData]
    next_cursor: str
    has_more: bool
