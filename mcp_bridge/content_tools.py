"""Content server tools: bookmarks and notes (SPEC §7).

Each public method is one tool: django-mcp-server builds its name, description (the docstring)
and input schema (the annotated parameters) and runs it in the request's worker thread, so the
sync ORM and the services can be called directly. Descriptions are written for the model that
picks the tool: what it does, when to use it rather than its neighbour, and an example.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp_server import MCPToolset
from pydantic import Field

from content import item_types, reads, services
from content.models import Bookmark, Item, Note
from content.reads import ItemRef
from content.representation import dt, item_data, metadata_item_data
from content.services import Precondition
from mcp_bridge import schemas as t
from mcp_bridge.base import ToolsetBase, full_item, page, require_changes
from mcp_bridge.servers import content_server
from tiddly.errors import ValidationFailed


def _ref(type_name: str, item_id: str) -> ItemRef:
    return ItemRef.by_id(item_types.model_for(type_name), item_id)


def _load(owner: reads.Owner, type_name: str, item_id: str) -> Item:
    return reads.get_owned(owner, _ref(type_name, item_id))


class ContentTools(ToolsetBase, MCPToolset):
    mcp_server = content_server
    source = "mcp-content"

    def search_items(
        self,
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
    ) -> t.ContentPage:
        """Search or list the user's active bookmarks and notes.

        Matches the query against title, description, content and (bookmarks) URL. Returns
        {items, total, has_more}; each item has its id, type, title, tags, content_length and a
        500-character content_preview, but never the full content: call get_item with the id
        and type to read it. Use this to find items; use search_in_content to find text inside
        one known item. Page with offset while has_more is true.
        Example: {"query": "kubernetes", "type": "note", "tags": ["ops"]}.
        """
        args = {
            "query": query,
            "tags": tags,
            "tag_match": tag_match,
            "sort_by": sort_by,
            "sort_order": sort_order,
            "limit": limit,
            "offset": offset,
        }
        return page(self._owner(), [type] if type else ["bookmark", "note"], args)  # type: ignore[return-value]

    def get_item(
        self,
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
    ) -> t.ContentItem:
        """Read one bookmark or note by id and type: all fields, including its content.

        content_metadata gives total_lines and the line range returned. For a large item
        (content_length in the thousands of characters or more) read part of it with
        start_line/end_line, e.g. {"start_line": 120, "end_line": 180}, or find the lines
        first with search_in_content. Works for archived and trashed items too (see state).
        Line parameters are ignored when include_content is false.
        """
        item = _load(self._owner(), type, id)
        if not include_content:
            return metadata_item_data(item)  # type: ignore[return-value]
        return full_item(item, start_line, end_line)  # type: ignore[return-value]

    def search_in_content(
        self,
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
    ) -> t.SearchResult:
        """Find literal text inside ONE item; returns each match's line number and context.

        Use it before edit_content: to check how often the text occurs (edit_content needs
        exactly one occurrence), to copy the exact current wording into old_str, and to locate
        text in a large item without reading all of it (then get_item with start_line/end_line).
        Returns {matches: [{field, line, context}], total_matches}; no match is a valid answer
        (an empty list). Title/description matches have line null and the whole field as
        context. To find items across the collection use search_items instead.
        """
        item = _load(self._owner(), type, id)
        return reads.within_item_search(  # type: ignore[return-value]
            item, q=query, fields=fields, case_sensitive=case_sensitive, context_lines=context_lines
        )

    def edit_content(
        self,
        id: t.ItemId,
        type: t.ItemType,
        old_str: t.OldStr,
        new_str: t.NewStr,
        expected_updated_at: t.ExpectedUpdatedAt = None,
    ) -> t.EditResult:
        """Replace one exact passage of an item's content: old_str -> new_str.

        Use it for targeted changes: fix a typo, change a sentence, insert text (old_str = the
        text next to the insertion point, new_str = that text plus the addition) or delete a
        passage (new_str = ""). old_str must occur exactly once; copy it from get_item or
        search_in_content and include enough surrounding text to make it unique. Matching
        tolerates trailing-whitespace and uniform indentation differences. On failure nothing
        is saved and the error says why: no_match (re-read the content), multiple_matches
        (lists every match with its line and context: extend old_str). Returns {match_type,
        line, id, updated_at}. To rewrite the whole content or change title/tags use
        update_item. Example: {"old_str": "recieve the data", "new_str": "receive the data"}.
        """
        outcome = services.edit_content(
            owner=self._owner(),
            ref=_ref(type, id),
            old_str=old_str,
            new_str=new_str,
            actor=self._actor(),
            precondition=Precondition(t.aware(expected_updated_at)),
        )
        return {
            "match_type": outcome.match_type,
            "line": outcome.line,
            "id": str(outcome.item.pk),
            "updated_at": dt(outcome.item.updated_at),
        }

    def update_item(
        self,
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
    ) -> t.UpdateResult:
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
            owner=self._owner(),
            ref=_ref(type, id),
            data=services.item_fields(data),
            actor=self._actor(),
            precondition=Precondition(t.aware(expected_updated_at)),
        )
        return {
            "id": str(item.pk),
            "updated_at": dt(item.updated_at),
            "summary": f"Updated {item.label()}: {', '.join(data)}.",
        }

    def create_bookmark(
        self,
        url: Annotated[str, Field(description="The http(s) URL to save.")],
        title: Annotated[str | None, Field(description="Title (e.g. the page's title).")] = None,
        description: Annotated[str | None, Field(description="A short summary.")] = None,
        content: Annotated[
            str | None, Field(description="Optional text to keep with it (notes, an excerpt).")
        ] = None,
        tags: Annotated[
            list[str] | None, Field(description="Tags, lowercase and hyphenated.")
        ] = None,
    ) -> t.ContentItem:
        """Save a new bookmark (a URL with title, description, tags and optional content).

        The page is not fetched: pass the title and description you know. A URL the user has
        already saved gives the error url_conflict with existing_id: update that bookmark
        instead. Returns the created bookmark. To write a note use create_note.
        """
        given = {"url": url, "title": title, "description": description, "content": content}
        data: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        if tags is not None:
            data["tags"] = tags
        item = services.create_item(
            owner=self._owner(),
            model=Bookmark,
            data=services.item_fields(data),
            actor=self._actor(),
        )
        return item_data(item)  # type: ignore[return-value]

    def create_note(
        self,
        title: Annotated[str, Field(description="The note's title (required, non-blank).")],
        description: Annotated[str | None, Field(description="A short summary.")] = None,
        content: Annotated[str | None, Field(description="The note's text (markdown).")] = None,
        tags: Annotated[
            list[str] | None, Field(description="Tags, lowercase and hyphenated.")
        ] = None,
    ) -> t.ContentItem:
        """Create a new note (title, markdown content, description, tags).

        Returns the created note, with the id and updated_at to use for later edits. To save a
        web page use create_bookmark.
        """
        given = {"title": title, "description": description, "content": content}
        data: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        if tags is not None:
            data["tags"] = tags
        item = services.create_item(
            owner=self._owner(),
            model=Note,
            data=services.item_fields(data),
            actor=self._actor(),
        )
        return item_data(item)  # type: ignore[return-value]

    def list_tags(self) -> t.TagList:
        """List the user's tags with how many active items (of any type) carry each.

        Sorted by count, most used first. Use it to pick existing tags instead of inventing
        near-duplicates, and as filters for search_items.
        """
        return {"tags": self._tag_counts()}  # type: ignore[typeddict-item]
