"""Typed shapes of the MCP tool results (outputSchema + structuredContent) and shared parameters.

The result types mirror the REST JSON (``content.api.serializers.item_data`` and friends): a tool
returns exactly what the matching REST endpoint returns, so an agent and a script see one format.
They are TypedDicts rather than ``dict`` because FastMCP only emits ``structuredContent`` and an
``outputSchema`` for a typed return; keys that a type does not declare would be dropped, so every
key the serializers produce is declared here.

No ``from __future__ import annotations`` in this module: TypedDict decides which keys are
``NotRequired`` when the class is created, and cannot see through string annotations.
"""

from datetime import UTC, datetime
from typing import Annotated, Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

# --- results ------------------------------------------------------------------------------------


class ContentMetadata(TypedDict):
    total_lines: int
    start_line: int
    end_line: int
    is_partial: bool


class Argument(TypedDict):
    name: str
    description: str | None
    required: bool


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
    content_length: int | None
    content: NotRequired[str | None]
    content_metadata: NotRequired[ContentMetadata | None]
    content_preview: NotRequired[str | None]


class RelatedItem(TypedDict):
    relationship_id: str
    type: str
    id: str
    title: str | None
    description: str | None


class ContentItem(_Item):
    """A bookmark or note as the REST API returns it.

    ``content`` and ``content_metadata`` come with full reads; ``content_preview`` with lists and
    metadata-only reads; ``url`` with bookmarks; ``relationships`` with get_item.
    """

    url: NotRequired[str]
    relationships: NotRequired[list[RelatedItem]]


class PromptItem(_Item):
    """A prompt as the REST API returns it (``content`` is its template)."""

    name: str
    arguments: list[Argument]


class ContentPage(TypedDict):
    items: list[ContentItem]
    total: int
    has_more: bool


class PromptPage(TypedDict):
    items: list[PromptItem]
    total: int
    has_more: bool


class Match(TypedDict):
    field: str
    line: int | None
    context: str


class SearchResult(TypedDict):
    matches: list[Match]
    total_matches: int


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


# --- parameters ---------------------------------------------------------------------------------


class PromptArgumentIn(BaseModel):
    """One declared template variable."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[
        str,
        Field(
            description="Variable name as used in the template ({{ name }}): lowercase letters, "
            "digits and underscores, starting with a letter (e.g. code_to_review)."
        ),
    ]
    description: Annotated[
        str | None,
        Field(description="What the value is for; shown to whoever fills the prompt in."),
    ] = None
    required: Annotated[
        bool,
        Field(description="True if rendering must supply it; optional ones render as ''."),
    ] = False


class EditIn(BaseModel):
    """One edit of a batch, matched against the ORIGINAL content."""

    model_config = ConfigDict(extra="forbid")

    old_str: Annotated[
        str,
        Field(
            min_length=1,
            description="Exact text to replace, copied from the current content (before any of "
            "the edits).",
        ),
    ]
    new_str: Annotated[str, Field(description="Replacement text; an empty string deletes it.")]
    replace_all: Annotated[
        bool, Field(description="Replace every occurrence instead of exactly one.")
    ] = False


ItemType = Annotated[
    Literal["bookmark", "note"],
    Field(description="The item's type: 'bookmark' or 'note' (as returned by search_items)."),
]
ItemId = Annotated[
    str, Field(description="The item's id (a UUID, as returned by search_items or a create tool).")
]
PromptName = Annotated[
    str,
    Field(
        description="The prompt's name, e.g. 'code-review' (as listed by search_prompts). Only "
        "active prompts are addressable."
    ),
]
Query = Annotated[
    str | None,
    Field(
        max_length=500,  # SPEC §3.3, as REST's q
        description='Search words. On PostgreSQL: full-text with stemming plus substring ("quoted '
        'phrase", OR, -exclude); otherwise case-insensitive substring. Omit to list everything.',
    ),
]
Tags = Annotated[
    list[str] | None,
    Field(description="Only items with these tags (lowercase, hyphenated), combined by tag_match."),
]
TagMatch = Annotated[
    Literal["all", "any"],
    Field(description="'all': items must carry every tag in tags; 'any': at least one."),
]
SortBy = Annotated[
    Literal["created_at", "updated_at", "last_used_at", "title", "relevance"] | None,
    Field(description="Sort key. Default: relevance when query is given, else created_at."),
]
SortOrder = Annotated[Literal["asc", "desc"], Field(description="Sort direction.")]
Limit = Annotated[int, Field(ge=1, le=100, description="Page size, 1-100.")]
Offset = Annotated[int, Field(ge=0, le=10**9, description="Items to skip (for the next page).")]
FilterId = Annotated[
    str | None,
    Field(
        description="A saved filter's id (from list_filters or get_context): only items matching "
        "its tag expression and types, AND the other parameters; its sort applies unless sort_by "
        "is given."
    ),
]
StartLine = Annotated[
    int | None,
    Field(ge=1, le=2**31, description="First line to return (1-based). Omit for line 1."),
]
EndLine = Annotated[
    int | None,
    Field(
        ge=1,
        le=2**31,
        description="Last line to return (inclusive; past the end is clamped). Omit for the end.",
    ),
]
ExpectedUpdatedAt = Annotated[
    datetime | None,
    Field(
        description="Optimistic lock: the exact updated_at from your last read or write of this "
        "item. If the item changed since, nothing is written and the error 'conflict' returns the "
        "current item as server_state. Omit if you don't have that exact value."
    ),
]
OldStr = Annotated[
    str,
    Field(
        min_length=1,
        description="The exact text to replace, copied from the current content; it must occur "
        "exactly once. Include a few surrounding words or lines to make it unique.",
    ),
]
NewStr = Annotated[
    str,
    Field(description="The replacement text. An empty string deletes old_str."),
]
OptionalOldStr = Annotated[
    str | None,
    Field(
        min_length=1,
        description="The exact text to replace, copied from the current content; it must occur "
        "exactly once (unless replace_all). Include a few surrounding words or lines to make it "
        "unique. Omit when you pass edits.",
    ),
]
OptionalNewStr = Annotated[
    str | None,
    Field(
        description="The replacement text (required with old_str). An empty string deletes old_str."
    ),
]
ReplaceAll = Annotated[
    bool,
    Field(
        description="true: replace EVERY occurrence of old_str (e.g. rename a term throughout) "
        "instead of failing with multiple_matches; the result adds replacements (the count)."
    ),
]
Edits = Annotated[
    list[EditIn] | None,
    Field(
        min_length=1,
        max_length=100,
        description="Several changes applied together as ONE edit (1-100), instead of "
        "old_str/new_str: each entry's old_str is matched against the ORIGINAL content, "
        "matches must not overlap, and if any entry fails nothing is saved (the error carries "
        'its edit_index). Example: [{"old_str": "v1.2", "new_str": "v1.3"}, {"old_str": '
        '"## Old title", "new_str": "## New title"}].',
    ),
]
DryRun = Annotated[
    bool,
    Field(
        description="true: check everything and save nothing; the result carries the unified "
        "diff of what would change (diff, diff_truncated). Use it to preview a large or risky "
        "edit."
    ),
]
VersionNumber = Annotated[
    int, Field(ge=1, le=2**31 - 1, description="Version number (1, 2, 3…) from the history.")
]
IncludeDiff = Annotated[
    bool,
    Field(
        description="true: also return diff, a unified diff against the previous version "
        "(at most 20 000 characters; diff_truncated says when cut)."
    ),
]
TagsReplacement = Annotated[
    list[str] | None,
    Field(
        description="FULL REPLACEMENT of the tags: the item ends up with exactly this list. To "
        "add a tag, send the existing tags plus the new one; [] removes all. Omit this parameter "
        "unless you are intentionally changing tags."
    ),
]


ContextLimit = Annotated[
    int, Field(ge=1, le=20, description="How many recently used / changed items to list (1-20).")
]
AnyItemType = Annotated[
    Literal["bookmark", "note", "prompt"],
    Field(description="The item's type: 'bookmark', 'note' or 'prompt'."),
]


def aware(value: datetime | None) -> datetime | None:
    """A timestamp without an offset is UTC (as the REST API reads it)."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
