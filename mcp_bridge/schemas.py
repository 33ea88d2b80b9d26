"""The MCP tools' shared parameter types (their input schema: types, limits, descriptions).

Results are typed in ``content.shapes``: a tool returns exactly what the matching REST endpoint
returns, so an agent and a script see one format.

No ``from __future__ import annotations`` in this module: pydantic reads these ``Annotated``
aliases when it builds the tools' argument models.
"""

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

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
SearchMode = Annotated[
    Literal["keyword", "hybrid", "semantic"],
    Field(
        description="keyword (default): every query word must occur (exact names, codes, "
        "phrases). hybrid: keyword and meaning rankings fused; finds paraphrases too. semantic: "
        "by meaning alone (a description of what you look for). hybrid and semantic need query, "
        "are ranked by score (sort_by does not apply) and give each item score and match "
        "(field, start_line/end_line for get_item's partial read, snippet)."
    ),
]
MinScore = Annotated[
    float | None,
    Field(
        ge=-1,
        le=1,
        description="hybrid/semantic: leave out items whose best passage's cosine is below this "
        "(default: the floor calibrated for the model, so unrelated items are left out; -1 "
        "keeps every item). Hybrid keeps keyword hits whatever their score.",
    ),
]
RelatedLimit = Annotated[int, Field(ge=1, le=50, description="How many related items, 1-50.")]
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
