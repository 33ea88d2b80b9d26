"""Content server tools: bookmarks and notes (SPEC §7).

Each function is one tool, registered on the server in ``register`` (in the order of SPEC §7):
its name is the tool's name, its docstring the description and its annotated parameters the
input schema; it runs in the request's worker thread, so the sync ORM and the services can be
called directly. Descriptions are written for the model that picks the tool: what it does, when
to use it rather than its neighbour, and an example. ``list_tags``, ``list_filters`` and
``get_context`` are the shared ones (``shared_tools``), with this server's descriptions.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import Field

from content import item_types, queries, services, shapes
from content.history import changes as changelog
from content.models import Bookmark, Item, Note
from content.queries import ItemRef
from content.search import related
from content.services import Precondition, relationships
from content.services.relationships import End
from mcp_bridge import calls, shared_tools
from mcp_bridge import schemas as t
from mcp_bridge.annotations import CREATE, EDIT, LINK, READ, UPDATE
from mcp_bridge.servers import TiddlyServer
from mcp_bridge.shared_tools import edits_in, require_changes
from tiddly.errors import ValidationFailed
from tiddly.scopes import readable_areas


def _ref(type_name: str, item_id: str) -> ItemRef:
    return ItemRef.by_id(item_types.model_for(type_name), item_id)


def _load(owner: queries.Owner, type_name: str, item_id: str) -> Item:
    return queries.get_owned(owner, _ref(type_name, item_id))


TYPES = ["bookmark", "note"]
CONTEXT_FOOTER = (
    "Next: read an item with get_item(type, id); list a filter's items with "
    "search_items(filter_id=…); prompts are on the Tiddly Prompt server."
)


def search_items(
    query: t.Query = None,
    type: Annotated[
        Literal["bookmark", "note"] | None,
        Field(description="Only bookmarks or only notes. Omit for both."),
    ] = None,
    tags: t.Tags = None,
    tag_match: t.TagMatch = "all",
    sort_by: t.SortBy = None,
    sort_order: t.SortOrder = "desc",
    limit: t.Limit = 50,
    offset: t.Offset = 0,
    filter_id: t.FilterId = None,
    mode: t.SearchMode = "keyword",
    min_score: t.MinScore = None,
) -> shapes.ContentPage:
    """Search or list the user's active bookmarks and notes.

    Matches the query against title, description, content and (bookmarks) URL. Returns
    {items, total, has_more}; each item has its id, type, title, tags, content_length and a
    500-character content_preview, but never the full content: call get_item with the id
    and type to read it. Use this to find items; use search_in_content to find text inside
    one known item. Page with offset while has_more is true.
    Example: {"query": "kubernetes", "type": "note", "tags": ["ops"]}.
    mode: keyword (default) for words you know occur (names, codes, error messages);
    hybrid when you describe what you look for in your own words ("the checklist for
    upgrading the cluster"); semantic for meaning alone. With hybrid/semantic each item
    adds score and match {field, start_line, end_line, snippet, highlights}: read the
    matched passage with get_item(id, type, start_line, end_line), even in a huge note.
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
    types: list[str] = [type] if type else TYPES
    if mode != "keyword":
        ranked, total, more, degraded = shared_tools.ranked_search(types, args, mode)
        page: shapes.ContentPage = {"items": list(ranked), "total": total, "has_more": more}
        if degraded:
            page["degraded"] = True
        return page
    items, total, more = shared_tools.search(types, args)
    return {
        "items": [shapes.listed_item_data(i) for i in items],
        "total": total,
        "has_more": more,
    }


def get_item(
    id: t.ItemId,
    type: t.ItemType,
    include_content: Annotated[
        bool,
        Field(
            description="false returns only metadata: content_length, content_preview and "
            "content_metadata.total_lines, to size an item up before reading it."
        ),
    ] = True,
    start_line: t.StartLine = None,
    end_line: t.EndLine = None,
) -> shapes.ContentItem:
    """Read one bookmark or note by id and type: all fields, including its content.

    content_metadata gives total_lines and the line range returned. For a large item
    (content_length in the thousands of characters or more) read part of it with
    start_line/end_line, e.g. {"start_line": 120, "end_line": 180}, or find the lines
    first with search_in_content. Works for archived and trashed items too (see state).
    Line parameters are ignored when include_content is false. relationships lists the
    items linked to this one ({relationship_id, type, id, title, description}).
    """
    owner = calls.owner()
    item = _load(owner, type, id)
    if not include_content:
        data = shapes.metadata_item_data(item)
        data["relationships"] = queries.related_items(owner, item)
        return data
    window = queries.line_window(item.content, start_line, end_line)
    return queries.item_detail(owner, item, window)


def search_in_content(
    id: t.ItemId,
    type: t.ItemType,
    query: Annotated[
        str,
        Field(
            min_length=1,
            description="Literal text to find (not a regex; may span several lines).",
        ),
    ],
    fields: Annotated[
        str,
        Field(description="Comma-separated fields to search: content, title, description."),
    ] = "content",
    case_sensitive: Annotated[bool, Field(description="Match letter case exactly.")] = False,
    context_lines: Annotated[
        int, Field(ge=0, le=10, description="Lines of context before and after each match.")
    ] = 2,
) -> shapes.SearchResult:
    """Find literal text inside ONE item; returns each match's line number and context.

    Use it before edit_content: to check how often the text occurs (edit_content needs
    exactly one occurrence), to copy the exact current wording into old_str, and to locate
    text in a large item without reading all of it (then get_item with start_line/end_line).
    Returns {matches: [{field, line, context}], total_matches}; no match is a valid answer
    (an empty list). Title/description matches have line null and the whole field as
    context. To find items across the collection use search_items instead.
    """
    item = _load(calls.owner(), type, id)
    return queries.within_item_search(
        item, q=query, fields=fields, case_sensitive=case_sensitive, context_lines=context_lines
    )


def edit_content(
    id: t.ItemId,
    type: t.ItemType,
    old_str: t.OptionalOldStr = None,
    new_str: t.OptionalNewStr = None,
    replace_all: t.ReplaceAll = False,
    edits: t.Edits = None,
    dry_run: t.DryRun = False,
    expected_updated_at: t.ExpectedUpdatedAt = None,
) -> shapes.EditResult:
    """Replace exact passages of an item's content: old_str -> new_str.

    Use it for targeted changes: fix a typo, change a sentence, insert text (old_str = the
    text next to the insertion point, new_str = that text plus the addition) or delete a
    passage (new_str = ""). old_str must occur exactly once; copy it from get_item or
    search_in_content and include enough surrounding text to make it unique. Matching
    tolerates trailing-whitespace and uniform indentation differences.
    Example: {"old_str": "recieve the data", "new_str": "receive the data"}.

    Which form:
    - One change: old_str + new_str.
    - The same change everywhere (rename a term): add replace_all=true.
      Example: {"old_str": "colour", "new_str": "color", "replace_all": true}.
    - Several different changes at once: edits (instead of old_str/new_str), all matched
      against the original text, applied together or not at all, one history version.
      Example: {"edits": [{"old_str": "Draft", "new_str": "Final"},
      {"old_str": "TODO: dates", "new_str": "Due 1 May"}]}.
    - Preview without saving: add dry_run=true; the result carries the unified diff.

    On failure nothing is saved and the error says why: no_match (re-read the content),
    multiple_matches (lists every match with its line and context: extend old_str or use
    replace_all), overlapping_edits (two edits touch the same text: merge them); with edits
    the error's edit_index names the failing edit. Returns {match_type, line, id,
    updated_at} (+ replacements with replace_all; edits: [{match_type, line,
    replacements}] with edits; dry_run, diff, diff_truncated on a dry run). To rewrite the
    whole content or change title/tags use update_item.
    """
    outcome = services.edit_content(
        owner=calls.owner(),
        ref=_ref(type, id),
        old_str=old_str,
        new_str=new_str,
        replace_all=replace_all,
        edits=edits_in(edits),
        dry_run=dry_run,
        actor=calls.actor(),
        precondition=Precondition(t.aware(expected_updated_at)),
    )
    return shapes.edit_data(outcome)


def update_item(
    id: t.ItemId,
    type: t.ItemType,
    title: Annotated[
        str | None, Field(description="New title (notes need a non-blank one).")
    ] = None,
    description: Annotated[
        str | None, Field(description="New description; an empty string clears it.")
    ] = None,
    tags: t.TagsReplacement = None,
    url: Annotated[str | None, Field(description="New URL (bookmarks only).")] = None,
    content: Annotated[
        str | None,
        Field(
            description="The COMPLETE new content, replacing all of it. For a change to "
            "part of the content use edit_content instead."
        ),
    ] = None,
    expected_updated_at: t.ExpectedUpdatedAt = None,
) -> shapes.UpdateResult:
    """Change an item's metadata and/or replace its whole content.

    Use it to retitle, re-describe, retag, change a bookmark's URL, or rewrite, reorganise,
    summarise or translate the whole content. Only the parameters you pass change; omitted
    ones keep their values. For a targeted change inside the content use edit_content (it
    sends only the changed passage). At least one of title, description, tags, url, content
    is required. Returns {id, updated_at, summary}.
    Example (add a tag to an item tagged ["python"]): {"tags": ["python", "testing"]}.
    """
    if url is not None and type != "bookmark":
        raise ValidationFailed({"url": ["url is only valid for bookmarks."]})
    given = {"title": title, "description": description, "tags": tags, "url": url}
    data = {k: v for k, v in {**given, "content": content}.items() if v is not None}
    require_changes(data, "title, description, tags, url, content")
    item = services.update_item(
        owner=calls.owner(),
        ref=_ref(type, id),
        data=services.item_fields(data),
        actor=calls.actor(),
        precondition=Precondition(t.aware(expected_updated_at)),
    )
    return {
        "id": str(item.pk),
        "updated_at": shapes.dt(item.updated_at),
        "summary": f"Updated {item.label()}: {', '.join(data)}.",
    }


def create_bookmark(
    url: Annotated[str, Field(description="The http(s) URL to save.")],
    title: Annotated[str | None, Field(description="Title (e.g. the page's title).")] = None,
    description: Annotated[str | None, Field(description="A short summary.")] = None,
    content: Annotated[
        str | None, Field(description="Optional text to keep with it (notes, an excerpt).")
    ] = None,
    tags: Annotated[list[str] | None, Field(description="Tags, lowercase and hyphenated.")] = None,
    capture: Annotated[
        bool | None,
        Field(description="false: do not fetch the page. Default: fetched in the background."),
    ] = None,
    page_html: Annotated[
        str | None,
        Field(
            description="The page's HTML if you have it (at most 5 000 000 characters): "
            "its text is extracted at once and nothing is fetched. Not with capture: false."
        ),
    ] = None,
) -> shapes.ContentItem:
    """Save a new bookmark (a URL with title, description, tags and optional content).

    Without content, Tiddly fetches the page in the background and fills blank title and
    description and the content with the page's text as Markdown (capture.status pending, then
    done, failed or skipped; read it later with get_item). A URL the user has already saved
    gives the error url_conflict with existing_id: update that bookmark instead. Returns the
    created bookmark. To write a note use create_note.
    """
    given = {"url": url, "title": title, "description": description, "content": content}
    data: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if tags is not None:
        data["tags"] = tags
    item = services.create_item(
        owner=calls.owner(),
        model=Bookmark,
        data=services.item_fields(data),
        actor=calls.actor(),
        options=services.CreateOptions(capture=capture, page_html=page_html),
    )
    return shapes.item_data(item)


def create_note(
    title: Annotated[str, Field(description="The note's title (required, non-blank).")],
    description: Annotated[str | None, Field(description="A short summary.")] = None,
    content: Annotated[str | None, Field(description="The note's text (markdown).")] = None,
    tags: Annotated[list[str] | None, Field(description="Tags, lowercase and hyphenated.")] = None,
) -> shapes.ContentItem:
    """Create a new note (title, markdown content, description, tags).

    Returns the created note, with the id and updated_at to use for later edits. To save a
    web page use create_bookmark.
    """
    given = {"title": title, "description": description, "content": content}
    data: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if tags is not None:
        data["tags"] = tags
    item = services.create_item(
        owner=calls.owner(),
        model=Note,
        data=services.item_fields(data),
        actor=calls.actor(),
    )
    return shapes.item_data(item)


def get_item_history(
    id: t.ItemId, type: t.ItemType, limit: t.Limit = 50, offset: t.Offset = 0
) -> shapes.HistoryPage:
    """List an item's versions and events, newest first.

    Every create, update, edit and restore is a numbered version; archive, delete and
    similar are events (version null). Each entry says what changed (changed_fields), who
    (source, e.g. mcp-content, api, admin; token_prefix) and when. Use it to find the
    version before a mistaken edit, then read it with get_item_version and put it back
    with restore_item_version. Returns {versions, total, has_more}.
    """
    return shared_tools.history_page(_ref(type, id), limit, offset)


def get_item_version(
    id: t.ItemId,
    type: t.ItemType,
    version: t.VersionNumber,
    start_line: t.StartLine = None,
    end_line: t.EndLine = None,
    include_diff: t.IncludeDiff = False,
) -> shapes.Version:
    """Read an item as it was at one version: its content (optionally only some lines)
    and metadata (title, description, tags, url).

    With include_diff=true the result also has diff: what that version changed, as a
    unified diff against the version before it. Use it to check what an edit did or to
    pick the version to restore. Example: {"id": "…", "type": "note", "version": 3,
    "include_diff": true}.
    """
    return shared_tools.version_at(_ref(type, id), version, start_line, end_line, include_diff)


def restore_item_version(
    id: t.ItemId,
    type: t.ItemType,
    version: t.VersionNumber,
    expected_updated_at: t.ExpectedUpdatedAt = None,
) -> shapes.RestoreResult:
    """Undo: put an item's content and metadata back as they were at an older version.

    Records a new version equal to the old one (nothing in the history is lost, so this
    can itself be undone). The current version cannot be restored (validation_error).
    Returns {id, updated_at, version (the new one), summary}.
    Example: {"id": "…", "type": "note", "version": 4}.
    """
    item = shared_tools.restore(_ref(type, id), version, expected_updated_at)
    return shared_tools.restore_result(item, version)


def find_related(
    id: t.ItemId,
    type: t.ItemType,
    limit: t.RelatedLimit = 10,
) -> shapes.RelatedList:
    """Find the user's items closest in meaning to one bookmark or note (the item itself
    excluded), best first.

    Use it to gather context around an item, to spot duplicates, or to pick items worth
    linking with create_relationship. Returns {results: [{type, id, title, score,
    linked}]}: score is the cosine similarity (higher is closer), linked tells whether a
    relationship already joins the two. Results may include prompts when the token can
    read them. Example: {"id": "…", "type": "note", "limit": 5}.
    """
    owner = calls.owner()
    item = _load(owner, type, id)
    readable = item_types.types_in(readable_areas(calls.principal()))
    return {"results": related.related(owner, item, limit, readable)}


def get_changes(
    since: Annotated[
        str | None,
        Field(
            description="next_cursor from your previous get_changes (or a change's cursor); "
            "omit to start from the oldest change kept."
        ),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=500, description="Changes per call, 1-500.")] = 100,
) -> shapes.ChangeFeed:
    """What changed in the user's bookmarks and notes since a cursor, oldest first: created,
    updated, archived, unarchived, deleted (trash), restored, purged, linked, unlinked.

    Keep next_cursor and pass it as since next time: you will see every change exactly once.
    has_more true means call again at once. Returns {changes: [{cursor, type, id, action,
    version, changed_fields, source, at}], next_cursor, has_more}. A cursor older than the
    retention is cursor_expired: start again without since.
    """
    feed = changelog.feed_body(
        owner_id=calls.owner().pk,
        since=since,
        types=list(calls.current().server.types),
        limit=limit,
    )
    return cast(shapes.ChangeFeed, feed)


def create_relationship(
    source_type: t.AnyItemType,
    source_id: t.ItemId,
    target_type: t.AnyItemType,
    target_id: t.ItemId,
    description: Annotated[
        str | None,
        Field(description="Why the two items belong together (up to 500 characters)."),
    ] = None,
) -> shapes.Link:
    """Link two of the user's items (a note about a bookmark, a prompt that goes with a
    note); links are undirected and show on both items' get_item as relationships.

    Idempotent: if the two items are already linked (in either order) the existing link is
    returned unchanged. An item cannot link to itself, and has at most 50 links. Returns
    {id, source_type, source_id, target_type, target_id, description, created_at}; the
    ends are stored in a canonical order, so source and target may come back swapped.
    Example: {"source_type": "note", "source_id": "…", "target_type": "bookmark",
    "target_id": "…", "description": "Notes on this article"}.
    """
    link, _ = relationships.create_link(
        owner=calls.owner(),
        source=End.parse(source_type, source_id, "source_id"),
        target=End.parse(target_type, target_id, "target_id"),
        description=description,
        actor=calls.actor(),
    )
    return relationships.link_data(link)


LIST_TAGS = """List the user's tags with how many active items (of any type) carry each.

    Sorted by count, most used first. Use it to pick existing tags instead of inventing
    near-duplicates, and as filters for search_items.
    """
LIST_FILTERS = """List the user's saved filters that include bookmarks or notes.

    A saved filter is a named tag expression: an item matches when it has ALL the tags of
    any one group (groups are OR-ed). Pass a filter's id as filter_id to search_items to
    list or search within it; its default sort applies unless you pass sort_by.
    """
GET_CONTEXT = """A short markdown overview of the user's bookmarks and notes: call it first in a
    session to find your bearings in one call.

    Shows active items per type, the most used tags, up to 5 saved filters with their top
    5 items, and the items used and changed most recently (limit each). Every item line
    gives its type and id, ready for get_item. Returns {markdown, counts}; under 10 000
    characters whatever the collection's size.
    """


def register(server: TiddlyServer) -> None:
    """The tools in the order tools/list shows them (SPEC §7: reads, edits, creates; then the
    history tools)."""
    server.add_tool(search_items, title="Search bookmarks and notes", annotations=READ)
    server.add_tool(get_item, title="Read a bookmark or note", annotations=READ)
    server.add_tool(search_in_content, title="Find text inside an item", annotations=READ)
    server.add_tool(edit_content, title="Edit part of an item's content", annotations=EDIT)
    server.add_tool(
        update_item, title="Update an item's metadata or whole content", annotations=UPDATE
    )
    server.add_tool(create_bookmark, title="Save a bookmark", annotations=CREATE)
    server.add_tool(create_note, title="Create a note", annotations=CREATE)
    server.add_tool(
        shared_tools.list_tags, title="List tags", annotations=READ, description=LIST_TAGS
    )
    server.add_tool(get_item_history, title="List an item's versions", annotations=READ)
    server.add_tool(get_item_version, title="Read an item at a version", annotations=READ)
    server.add_tool(
        restore_item_version, title="Restore an item to a version (undo)", annotations=UPDATE
    )
    shared_tools.add_filters_and_context(
        server,
        context_title="Overview of bookmarks and notes",
        filters_help=LIST_FILTERS,
        context_help=GET_CONTEXT,
    )
    server.add_tool(create_relationship, title="Link two items", annotations=LINK)
    server.add_tool(get_changes, title="What changed since a cursor", annotations=READ)
    server.add_tool(find_related, title="Find items related by meaning", annotations=READ)
