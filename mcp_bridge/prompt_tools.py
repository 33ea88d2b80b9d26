"""Prompt server tools: prompt templates addressed by name (SPEC §7).

Every tool sees the caller's *active* prompts only: a by-name ``ItemRef`` resolves among active
prompts, so archived and trashed prompts are "not found" here (restore them in the admin first).
The prompts capability (``prompts/list``, ``prompts/get``) is in ``prompt_capability``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from content import queries, services, shapes
from content.models import Item
from content.queries import ItemRef
from content.services import Precondition
from mcp_bridge import calls, shared_tools
from mcp_bridge import schemas as t
from mcp_bridge.annotations import CREATE, EDIT, READ, UPDATE
from mcp_bridge.servers import TiddlyServer
from mcp_bridge.shared_tools import edits_in, require_changes
from prompts.models import Prompt

ArgumentsReplacement = Annotated[
    list[t.PromptArgumentIn] | None,
    Field(
        description="FULL REPLACEMENT of the argument list. Omit it when the template's "
        "{{ variables }} are unchanged (the current arguments are kept). When variables are "
        "added, removed or renamed, send ALL arguments the new template uses, keeping the "
        "descriptions of the unchanged ones exactly as they are."
    ),
]
PromptTags = Annotated[
    list[str] | None,
    Field(
        description="FULL REPLACEMENT of the tags: the prompt ends up with exactly this list. "
        "Omit unless you are intentionally changing tags; to add one, send the existing tags "
        "plus the new one."
    ),
]


def _named(name: str) -> ItemRef:
    return ItemRef(Prompt, name=name)


def _load(owner: queries.Owner, name: str) -> Prompt:
    prompt = queries.get_owned(owner, _named(name))
    assert isinstance(prompt, Prompt)
    return prompt


def _arguments(arguments: list[t.PromptArgumentIn] | None) -> list[dict[str, Any]] | None:
    return None if arguments is None else [a.model_dump() for a in arguments]


def _written(prompt: Item, summary: str) -> shapes.PromptWriteResult:
    return {
        "id": str(prompt.pk),
        "name": str(prompt),  # a prompt's str is its name
        "updated_at": shapes.dt(prompt.updated_at),
        "summary": summary,
    }


TYPES = ["prompt"]
CONTEXT_FOOTER = (
    "Next: read a template with get_prompt_template(name); list a filter's prompts with "
    "search_prompts(filter_id=…); bookmarks and notes are on the Tiddly Content server."
)


def search_prompts(
    query: t.Query = None,
    tags: t.Tags = None,
    tag_match: t.TagMatch = "all",
    sort_by: t.SortBy = None,
    sort_order: t.SortOrder = "desc",
    limit: t.Limit = 50,
    offset: t.Offset = 0,
    filter_id: t.FilterId = None,
    mode: t.SearchMode = "keyword",
    min_score: t.MinScore = None,
) -> shapes.PromptPage:
    """Search or list the user's active prompt templates.

    Matches the query against name, title, description and template text. Returns
    {items, total, has_more}; each item has name, title, description, arguments, tags,
    content_length and a 500-character content_preview (not the full template: use
    get_prompt_template). Page with offset while has_more is true.
    Example: {"query": "review", "tags": ["coding"]}.
    mode: keyword (default) when you know a word of the prompt (its name); hybrid or
    semantic to find a prompt by what it does ("turn meeting notes into action items").
    With hybrid/semantic each item adds score and match {field, start_line, end_line,
    snippet}: read those lines with get_prompt_template(name, start_line, end_line).
    """
    args = {
        "query": query,
        "tags": tags,
        "tag_match": tag_match,
        "sort_by": sort_by,
        "sort_order": sort_order,
        "limit": limit,
        "offset": offset,
        "filter_id": filter_id,
        "min_score": min_score,
    }
    if mode != "keyword":
        ranked, total, more, degraded = shared_tools.ranked_search(TYPES, args, mode)
        page: shapes.PromptPage = {
            "items": [shapes.listed_prompt_item(p) for p in ranked],
            "total": total,
            "has_more": more,
        }
        if degraded:
            page["degraded"] = True
        return page
    items, total, more = shared_tools.search(TYPES, args)
    return {
        "items": [shapes.listed_prompt_item(shapes.listed_item_data(p)) for p in items],
        "total": total,
        "has_more": more,
    }


def get_prompt_template(
    name: t.PromptName, start_line: t.StartLine = None, end_line: t.EndLine = None
) -> shapes.PromptTemplate:
    """Read a prompt's raw Jinja2 template (not rendered) with its arguments and tags.

    Use it before editing: edit_prompt_template needs the exact current text. For a long
    template read some lines with start_line/end_line (content_metadata gives
    total_lines); get_prompt_metadata sizes it up without the text. To fill a prompt in
    with values, use the MCP prompts/get request instead.
    """
    prompt = _load(calls.owner(), name)
    data = shared_tools.full_item(prompt, start_line, end_line)
    return {  # in the item shape's key order
        "id": data["id"],
        "title": data["title"],
        "description": data["description"],
        "tags": data["tags"],
        "updated_at": data["updated_at"],
        "name": prompt.name,
        "arguments": prompt.arguments,
        "content": data.get("content"),
        "content_metadata": data.get("content_metadata"),
    }


def get_prompt_metadata(name: t.PromptName) -> shapes.PromptItem:
    """A prompt's metadata without its template text: title, description, arguments, tags,
    dates, content_length, content_metadata.total_lines and a 500-character preview.

    Use it to check what a prompt is for and how long it is before reading it with
    get_prompt_template.
    """
    prompt = _load(calls.owner(), name)
    return shapes.prompt_item(shapes.metadata_item_data(prompt))


def create_prompt(
    name: Annotated[
        str,
        Field(
            description="Unique name: lowercase letters/digits in hyphen-separated words, "
            "e.g. 'code-review'."
        ),
    ],
    content: Annotated[
        str,
        Field(
            description="The Jinja2 template, e.g. 'Review this {{ language }} code:\\n"
            "{{ code }}'. Every {{ variable }} must be declared in arguments."
        ),
    ],
    title: Annotated[str | None, Field(description="A human-readable title.")] = None,
    description: Annotated[
        str | None, Field(description="What the prompt is for and when to use it.")
    ] = None,
    arguments: Annotated[
        list[t.PromptArgumentIn] | None,
        Field(
            description="One entry per template variable (each must be used by the "
            "template). Omit for a template without variables."
        ),
    ] = None,
    tags: Annotated[list[str] | None, Field(description="Tags, lowercase and hyphenated.")] = None,
) -> shapes.PromptWriteResult:
    """Create a new prompt template.

    The template is validated: a syntax error, a variable used but not declared in
    arguments, or an argument the template does not use gives the error invalid_template
    (nothing saved). A name already in use gives name_conflict.
    Example:
    {"name": "summarize-article",
     "content": "Summarize in {{ words }} words:\\n{{ text }}",
     "arguments": [{"name": "text", "description": "The article", "required": true},
                   {"name": "words", "description": "Target length", "required": false}]}
    Returns {id, name, updated_at, summary}.
    """
    data: dict[str, Any] = {"name": name, "content": content}
    optional = {"title": title, "description": description, "tags": tags}
    data.update({k: v for k, v in optional.items() if v is not None})
    if arguments is not None:
        data["arguments"] = _arguments(arguments)
    prompt = services.create_item(
        owner=calls.owner(), model=Prompt, data=services.item_fields(data), actor=calls.actor()
    )
    return _written(prompt, f"Created prompt '{prompt.name}'.")


def edit_prompt_template(
    name: t.PromptName,
    old_str: t.OptionalOldStr = None,
    new_str: t.OptionalNewStr = None,
    replace_all: t.ReplaceAll = False,
    edits: t.Edits = None,
    dry_run: t.DryRun = False,
    arguments: ArgumentsReplacement = None,
    expected_updated_at: t.ExpectedUpdatedAt = None,
) -> shapes.PromptEditResult:
    """Replace exact passages of a prompt's template: old_str -> new_str.

    Use it for targeted changes, from a typo to a whole section; to rewrite the whole
    template use update_prompt. old_str must occur exactly once (copy it from
    get_prompt_template, with enough context to be unique). If the edit adds, removes or
    renames a {{ variable }}, pass the complete new arguments list in the same call; if
    it doesn't, omit arguments. Both are applied together or not at all.

    Example: the template "Hello {{ name }} from {{ city }}!" has arguments name and city;
    to drop the city:
    {"name": "greeting", "old_str": "Hello {{ name }} from {{ city }}!",
     "new_str": "Hello {{ name }}!",
     "arguments": [{"name": "name", "description": "Who to greet", "required": true}]}

    Which form:
    - One change: old_str + new_str.
    - The same change everywhere: add replace_all=true.
      Example: {"name": "review", "old_str": "Python", "new_str": "Go", "replace_all": true}.
    - Several different changes at once: edits (instead of old_str/new_str), all matched
      against the original template, applied together or not at all, one history version.
      Example: {"name": "review", "edits": [{"old_str": "Be brief.", "new_str": "Be
      thorough."}, {"old_str": "## Output", "new_str": "## Answer"}]}.
    - Preview without saving: add dry_run=true (the template is still validated); the
      result carries the unified diff.

    Errors (nothing saved): no_match, multiple_matches (with each match's line and
    context), overlapping_edits, invalid_template (the edited template and arguments
    disagree); with edits the error's edit_index names the failing edit.
    Returns {id, name, updated_at, match_type, line, summary} (+ replacements with
    replace_all; edits: [{match_type, line, replacements}] with edits; dry_run, diff,
    diff_truncated on a dry run).
    """
    outcome = services.edit_content(
        owner=calls.owner(),
        ref=_named(name),
        old_str=old_str,
        new_str=new_str,
        replace_all=replace_all,
        edits=edits_in(edits),
        dry_run=dry_run,
        actor=calls.actor(),
        also=None if arguments is None else {"arguments": _arguments(arguments)},
        precondition=Precondition(t.aware(expected_updated_at)),
    )
    prompt = outcome.item
    assert isinstance(prompt, Prompt)
    where = ", ".join(f"{r.match_type} at line {r.line}" for r in outcome.results)
    what = ", dry run: nothing saved" if outcome.dry_run else ""
    what += "" if outcome.changed else ", no changes"
    verb = "Would update" if outcome.dry_run else "Updated"
    result = _written(prompt, f"{verb} prompt '{prompt.name}' (match: {where}{what}).")
    data: shapes.PromptEditResult = {**shapes.edit_data(outcome), **result}
    return data


def update_prompt(
    name: t.PromptName,
    new_name: Annotated[
        str | None, Field(description="Rename the prompt (must be unused).")
    ] = None,
    title: Annotated[str | None, Field(description="New title.")] = None,
    description: Annotated[
        str | None, Field(description="New description; an empty string clears it.")
    ] = None,
    tags: PromptTags = None,
    content: Annotated[
        str | None,
        Field(
            description="The COMPLETE new template, replacing all of it. For a change to "
            "part of it use edit_prompt_template."
        ),
    ] = None,
    arguments: ArgumentsReplacement = None,
    expected_updated_at: t.ExpectedUpdatedAt = None,
) -> shapes.PromptWriteResult:
    """Rewrite a prompt's whole template and/or change its name, title, description, tags.

    Use it whenever the whole template is rewritten, restructured or simplified, or for
    metadata changes; use edit_prompt_template for a change to one part. Only the
    parameters you pass change. All-or-nothing: if the new template and arguments don't
    validate, nothing is saved. When a rewrite keeps the same {{ variables }}, omit
    arguments. Example (rename and retitle): {"name": "code-review",
    "new_name": "python-review", "title": "Python code review"}.
    Returns {id, name, updated_at, summary}.
    """
    given = {
        "name": new_name,
        "title": title,
        "description": description,
        "tags": tags,
        "content": content,
        "arguments": _arguments(arguments),
    }
    data = {k: v for k, v in given.items() if v is not None}
    require_changes(data, "new_name, title, description, tags, content, arguments")
    prompt = services.update_item(
        owner=calls.owner(),
        ref=_named(name),
        data=services.item_fields(data),
        actor=calls.actor(),
        precondition=Precondition(t.aware(expected_updated_at)),
    )
    fields = ", ".join("new_name" if k == "name" else k for k in data)
    return _written(prompt, f"Updated {prompt.label()}: {fields}.")


def get_prompt_history(
    name: t.PromptName, limit: t.Limit = 50, offset: t.Offset = 0
) -> shapes.HistoryPage:
    """List a prompt's versions and events, newest first.

    Every create, update, edit and restore is a numbered version; archive and similar are
    events (version null). Each entry says what changed (changed_fields), who (source, e.g.
    mcp-prompts, api, admin; token_prefix) and when. Use it to find the version before a
    mistaken edit, read it with get_prompt_version, put it back with
    restore_prompt_version. Returns {versions, total, has_more}.
    """
    return shared_tools.history_page(_named(name), limit, offset)


def get_prompt_version(
    name: t.PromptName,
    version: t.VersionNumber,
    start_line: t.StartLine = None,
    end_line: t.EndLine = None,
    include_diff: t.IncludeDiff = False,
) -> shapes.Version:
    """Read a prompt as it was at one version: its template (optionally only some lines)
    and metadata (name, title, description, arguments, tags).

    With include_diff=true the result also has diff: what that version changed, as a
    unified diff against the version before it.
    Example: {"name": "code-review", "version": 2, "include_diff": true}.
    """
    return shared_tools.version_at(_named(name), version, start_line, end_line, include_diff)


def restore_prompt_version(
    name: t.PromptName,
    version: t.VersionNumber,
    expected_updated_at: t.ExpectedUpdatedAt = None,
) -> shapes.PromptRestoreResult:
    """Undo: put a prompt's template, arguments and metadata back as they were at an older
    version.

    Records a new version equal to the old one (so it can itself be undone); the template
    is validated as on any change. Restoring an old name renames the prompt back: use the
    returned name from then on. The current version cannot be restored (validation_error).
    Returns {id, name, updated_at, version (the new one), summary}.
    Example: {"name": "code-review", "version": 3}.
    """
    item = shared_tools.restore(_named(name), version, expected_updated_at)
    assert isinstance(item, Prompt)
    return {**shared_tools.restore_result(item, version), "name": item.name}


LIST_TAGS = """List the user's tags with how many active items (prompts, notes and bookmarks)
    carry each, most used first. Use it to reuse existing tags and to filter
    search_prompts.
    """
LIST_FILTERS = """List the user's saved filters that include prompts.

    A saved filter is a named tag expression: a prompt matches when it has ALL the tags of
    any one group (groups are OR-ed). Pass a filter's id as filter_id to search_prompts to
    list or search within it; its default sort applies unless you pass sort_by.
    """
GET_CONTEXT = """A short markdown overview of the user's prompt library: call it first in a session
    to find your bearings in one call.

    Shows the number of active prompts, the most used tags, up to 5 saved filters with
    their top 5 prompts, and the prompts used and changed most recently (limit each).
    Every line gives the prompt's name, ready for get_prompt_template or prompts/get.
    Returns {markdown, counts}; under 10 000 characters whatever the library's size.
    """


def register(server: TiddlyServer) -> None:
    """The tools in the order tools/list shows them (SPEC §7)."""
    server.add_tool(search_prompts, title="Search prompt templates", annotations=READ)
    server.add_tool(get_prompt_template, title="Read a prompt's template", annotations=READ)
    server.add_tool(get_prompt_metadata, title="Read a prompt's metadata", annotations=READ)
    server.add_tool(create_prompt, title="Create a prompt template", annotations=CREATE)
    server.add_tool(
        edit_prompt_template, title="Edit part of a prompt's template", annotations=EDIT
    )
    server.add_tool(update_prompt, title="Rewrite or update a prompt", annotations=UPDATE)
    server.add_tool(
        shared_tools.list_tags, title="List tags", annotations=READ, description=LIST_TAGS
    )
    server.add_tool(get_prompt_history, title="List a prompt's versions", annotations=READ)
    server.add_tool(get_prompt_version, title="Read a prompt at a version", annotations=READ)
    server.add_tool(
        restore_prompt_version,
        title="Restore a prompt to a version (undo)",
        annotations=UPDATE,
    )
    shared_tools.add_filters_and_context(
        server,
        context_title="Overview of prompts",
        filters_help=LIST_FILTERS,
        context_help=GET_CONTEXT,
    )
