"""Prompt server tools: prompt templates addressed by name (SPEC §7).

Every tool sees the caller's *active* prompts only: a by-name ``ItemRef`` resolves among active
prompts, so archived and trashed prompts are "not found" here (restore them in the admin first).
The prompts capability (``prompts/list``, ``prompts/get``) is in ``prompt_capability``.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp_server import MCPToolset
from pydantic import Field

from content import reads, services
from content.models import Item
from content.reads import ItemRef
from content.services import Precondition
from content.shapes import dt, edit_data, metadata_item_data
from mcp_bridge import schemas as t
from mcp_bridge.base import (
    ToolsetBase,
    edits_in,
    filter_list,
    full_item,
    overview,
    page,
    require_changes,
    restore_result,
    version_result,
)
from mcp_bridge.servers import prompt_server
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


def _load(owner: reads.Owner, name: str) -> Prompt:
    return reads.get_owned(owner, _named(name))  # type: ignore[return-value]


def _arguments(arguments: list[t.PromptArgumentIn] | None) -> list[dict[str, Any]] | None:
    return None if arguments is None else [a.model_dump() for a in arguments]


def _written(prompt: Item, summary: str) -> t.PromptWriteResult:
    return {
        "id": str(prompt.pk),
        "name": str(prompt),  # a prompt's str is its name
        "updated_at": dt(prompt.updated_at),
        "summary": summary,
    }


TYPES = ["prompt"]
CONTEXT_FOOTER = (
    "Next: read a template with get_prompt_template(name); list a filter's prompts with "
    "search_prompts(filter_id=…); bookmarks and notes are on the Tiddly Content server."
)


class PromptTools(ToolsetBase, MCPToolset):
    mcp_server = prompt_server
    source = "mcp-prompts"

    def search_prompts(
        self,
        query: t.Query = None,
        tags: t.Tags = None,
        tag_match: t.TagMatch = "all",
        sort_by: t.SortBy = None,
        sort_order: t.SortOrder = "desc",
        limit: t.Limit = 50,
        offset: t.Offset = 0,
        filter_id: t.FilterId = None,
    ) -> t.PromptPage:
        """Search or list the user's active prompt templates.

        Matches the query against name, title, description and template text. Returns
        {items, total, has_more}; each item has name, title, description, arguments, tags,
        content_length and a 500-character content_preview (not the full template: use
        get_prompt_template). Page with offset while has_more is true.
        Example: {"query": "review", "tags": ["coding"]}.
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
        }
        return page(self._owner(), TYPES, args)  # type: ignore[return-value]

    def get_prompt_template(
        self, name: t.PromptName, start_line: t.StartLine = None, end_line: t.EndLine = None
    ) -> t.PromptTemplate:
        """Read a prompt's raw Jinja2 template (not rendered) with its arguments and tags.

        Use it before editing: edit_prompt_template needs the exact current text. For a long
        template read some lines with start_line/end_line (content_metadata gives
        total_lines); get_prompt_metadata sizes it up without the text. To fill a prompt in
        with values, use the MCP prompts/get request instead.
        """
        data = full_item(_load(self._owner(), name), start_line, end_line)
        keys = t.PromptTemplate.__annotations__
        return {k: v for k, v in data.items() if k in keys}  # type: ignore[return-value]

    def get_prompt_metadata(self, name: t.PromptName) -> t.PromptItem:
        """A prompt's metadata without its template text: title, description, arguments, tags,
        dates, content_length, content_metadata.total_lines and a 500-character preview.

        Use it to check what a prompt is for and how long it is before reading it with
        get_prompt_template.
        """
        return metadata_item_data(_load(self._owner(), name))  # type: ignore[return-value]

    def create_prompt(
        self,
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
        tags: Annotated[
            list[str] | None, Field(description="Tags, lowercase and hyphenated.")
        ] = None,
    ) -> t.PromptWriteResult:
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
            owner=self._owner(), model=Prompt, data=services.item_fields(data), actor=self._actor()
        )
        return _written(prompt, f"Created prompt '{prompt.name}'.")

    def edit_prompt_template(
        self,
        name: t.PromptName,
        old_str: t.OptionalOldStr = None,
        new_str: t.OptionalNewStr = None,
        replace_all: t.ReplaceAll = False,
        edits: t.Edits = None,
        dry_run: t.DryRun = False,
        arguments: ArgumentsReplacement = None,
        expected_updated_at: t.ExpectedUpdatedAt = None,
    ) -> t.PromptEditResult:
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
            owner=self._owner(),
            ref=_named(name),
            old_str=old_str,
            new_str=new_str,
            replace_all=replace_all,
            edits=edits_in(edits),
            dry_run=dry_run,
            actor=self._actor(),
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
        data: t.PromptEditResult = {**edit_data(outcome), **result}
        return data

    def update_prompt(
        self,
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
    ) -> t.PromptWriteResult:
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
            owner=self._owner(),
            ref=_named(name),
            data=services.item_fields(data),
            actor=self._actor(),
            precondition=Precondition(t.aware(expected_updated_at)),
        )
        fields = ", ".join("new_name" if k == "name" else k for k in data)
        return _written(prompt, f"Updated {prompt.label()}: {fields}.")

    def get_prompt_history(
        self, name: t.PromptName, limit: t.Limit = 50, offset: t.Offset = 0
    ) -> t.HistoryPage:
        """List a prompt's versions and events, newest first.

        Every create, update, edit and restore is a numbered version; archive and similar are
        events (version null). Each entry says what changed (changed_fields), who (source, e.g.
        mcp-prompts, api, admin; token_prefix) and when. Use it to find the version before a
        mistaken edit, read it with get_prompt_version, put it back with
        restore_prompt_version. Returns {versions, total, has_more}.
        """
        item = reads.get_owned_head(self._owner(), _named(name))
        return reads.history_summary(item, limit=limit, offset=offset)

    def get_prompt_version(
        self,
        name: t.PromptName,
        version: t.VersionNumber,
        start_line: t.StartLine = None,
        end_line: t.EndLine = None,
        include_diff: t.IncludeDiff = False,
    ) -> t.Version:
        """Read a prompt as it was at one version: its template (optionally only some lines)
        and metadata (name, title, description, arguments, tags).

        With include_diff=true the result also has diff: what that version changed, as a
        unified diff against the version before it.
        Example: {"name": "code-review", "version": 2, "include_diff": true}.
        """
        item = reads.get_owned_head(self._owner(), _named(name))
        return version_result(item, version, start_line, end_line, include_diff)

    def restore_prompt_version(
        self,
        name: t.PromptName,
        version: t.VersionNumber,
        expected_updated_at: t.ExpectedUpdatedAt = None,
    ) -> t.PromptRestoreResult:
        """Undo: put a prompt's template, arguments and metadata back as they were at an older
        version.

        Records a new version equal to the old one (so it can itself be undone); the template
        is validated as on any change. Restoring an old name renames the prompt back: use the
        returned name from then on. The current version cannot be restored (validation_error).
        Returns {id, name, updated_at, version (the new one), summary}.
        Example: {"name": "code-review", "version": 3}.
        """
        item = services.restore_version(
            owner=self._owner(),
            ref=_named(name),
            version=version,
            actor=self._actor(),
            precondition=Precondition(t.aware(expected_updated_at)),
        )
        assert isinstance(item, Prompt)
        restored = restore_result(item, version)
        restored["name"] = item.name
        return restored  # type: ignore[return-value]

    def list_tags(self) -> t.TagList:
        """List the user's tags with how many active items (prompts, notes and bookmarks)
        carry each, most used first. Use it to reuse existing tags and to filter
        search_prompts.
        """
        return {"tags": self._tag_counts()}

    def list_filters(self) -> t.FilterList:
        """List the user's saved filters that include prompts.

        A saved filter is a named tag expression: a prompt matches when it has ALL the tags of
        any one group (groups are OR-ed). Pass a filter's id as filter_id to search_prompts to
        list or search within it; its default sort applies unless you pass sort_by.
        """
        return filter_list(self._owner(), TYPES)  # type: ignore[return-value]

    def get_context(self, limit: t.ContextLimit = 10) -> t.Context:
        """A short markdown overview of the user's prompt library: call it first in a session
        to find your bearings in one call.

        Shows the number of active prompts, the most used tags, up to 5 saved filters with
        their top 5 prompts, and the prompts used and changed most recently (limit each).
        Every line gives the prompt's name, ready for get_prompt_template or prompts/get.
        Returns {markdown, counts}; under 10 000 characters whatever the library's size.
        """
        return overview(self._owner(), TYPES, limit, CONTEXT_FOOTER)
