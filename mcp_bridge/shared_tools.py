"""What both servers' tools share: the tools both offer, and the bodies of their history tools.

``list_tags``, ``list_filters`` and ``get_context`` are one function each, registered on both
servers with each server's description; they cover the calling server's item types
(``calls.current().server.types``). The history tools address an item differently on each
server (id and type; a prompt's name), so each server has its own thin signature over the one
implementation here (``history_page``, ``version_at``, ``restore``).

Tools are small adapters (STYLE): validate arguments, call one service or query, shape the result
with ``content.shapes`` as REST does. No ORM here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from content import history, item_types, queries, services, shapes
from content.models import Item
from content.queries import ItemRef, context
from content.search import ranking as ranked
from content.services import Precondition
from content.text.replace import Edit
from mcp_bridge import calls
from mcp_bridge import schemas as t
from mcp_bridge.annotations import READ
from mcp_bridge.servers import TiddlyServer
from tiddly.errors import ValidationFailed
from tiddly.scopes import readable_areas

# The most diff characters a history tool returns (as a dry run's diff): an agent's context is
# small, and the version itself can be read by lines.
DIFF_CHARS = 20_000


# --- tools on both servers ----------------------------------------------------------------------


def list_tags() -> shapes.TagList:
    """Tags with counts over the areas the caller may read (as ``/api/tags/``)."""
    types = item_types.types_in(readable_areas(calls.principal()))
    return {"tags": queries.tag_counts(calls.owner(), include_inactive=False, types=types)}


def list_filters() -> shapes.FilterList:
    """The owner's saved filters that include any of this server's types."""
    found = queries.filters_for_types(calls.owner(), calls.current().server.types)
    return {"filters": [queries.filter_data(f) for f in found]}


def get_context(limit: t.ContextLimit = 10) -> shapes.Context:
    server = calls.current().server
    return context.overview(
        calls.owner(), types=server.types, recent=limit, footer=server.context_footer
    )


def add_filters_and_context(
    server: TiddlyServer, *, context_title: str, filters_help: str, context_help: str
) -> None:
    """Register ``list_filters`` and ``get_context`` (last in tools/list on both servers)."""
    server.add_tool(
        list_filters, title="List saved filters", annotations=READ, description=filters_help
    )
    server.add_tool(get_context, title=context_title, annotations=READ, description=context_help)


# --- history ------------------------------------------------------------------------------------


def history_page(ref: ItemRef, limit: int, offset: int) -> shapes.HistoryPage:
    item = queries.get_owned_head(calls.owner(), ref)
    return queries.history_summary(item, limit=limit, offset=offset)


def version_at(
    ref: ItemRef,
    number: int,
    start_line: int | None,
    end_line: int | None,
    include_diff: bool,
) -> shapes.Version:
    """An item at version ``number`` as REST's ``GET …/history/{v}/`` shows it, plus its diff."""
    item = queries.get_owned_head(calls.owner(), ref)
    data = queries.version_data(item, number, start_line=start_line, end_line=end_line)
    if include_diff:
        diff = queries.diff_data(item, number, max_chars=DIFF_CHARS)
        data["diff"] = diff["diff"]
        data["diff_truncated"] = diff["truncated"]
    return data


def restore(ref: ItemRef, number: int, expected_updated_at: datetime | None) -> Item:
    return services.restore_version(
        owner=calls.owner(),
        ref=ref,
        version=number,
        actor=calls.actor(),
        precondition=Precondition(t.aware(expected_updated_at)),
    )


def restore_result(item: Item, version: int) -> shapes.RestoreResult:
    number = history.latest_version(item)
    return {
        "id": str(item.pk),
        "updated_at": shapes.dt(item.updated_at),
        "version": number,
        "summary": f"Restored {item.label()} to version {version}; it is now version {number}.",
    }


# --- helpers of the other tools -----------------------------------------------------------------


def full_item(item: Item, start_line: int | None, end_line: int | None) -> shapes.ItemData:
    window = queries.line_window(item.content, start_line, end_line)
    return shapes.item_data(item, window=window)


def search(types: list[str], args: dict[str, Any]) -> tuple[list[Item], int, bool]:
    """One page of the owner's items of ``types``: (items, total, whether more follow)."""
    owner = calls.owner()
    params = _list_params(owner, args, sort_by=args["sort_by"], sort_order=args["sort_order"])
    if len(types) == 1:
        total, items = queries.list_items(owner, item_types.model_for(types[0]), params)
    else:
        total, items = queries.list_content(owner, types, params)
    return items, total, params.offset + len(items) < total


def _list_params(
    owner: queries.Owner, args: dict[str, Any], *, sort_by: str | None, sort_order: str | None
) -> queries.ListParams:
    """The lists' parameters (validated as REST validates them) from a search tool's arguments."""
    return queries.list_params(
        owner,
        {
            "filter_id": args.get("filter_id"),
            "q": args["query"],
            "tags": args["tags"],
            "tag_match": args["tag_match"],
            "sort_by": sort_by,
            "sort_order": sort_order,
            "limit": args["limit"],
            "offset": args["offset"],
        },
    )


def ranked_search(
    types: list[str], args: dict[str, Any], mode: str
) -> tuple[list[shapes.ListedItemData], int, bool, bool]:
    """A hybrid or semantic search (SPEC §16), as ``/api/search/`` ranks it: (list entries with
    ``score`` and ``match``, total, whether more follow, whether it degraded to keyword)."""
    if not args["query"] or not args["query"].strip():
        raise ValidationFailed(
            {"query": [f"query is required with mode={mode}."]},
            message=f"mode={mode} ranks items against a query: pass query (or use mode=keyword "
            "to list items without one).",
        )
    if args["sort_by"] is not None:
        raise ValidationFailed(
            {"sort_by": [f"sort_by does not apply with mode={mode}: results are ranked by score."]},
            message=f"sort_by does not apply with mode={mode} (results are ranked by score): "
            "omit sort_by, or use mode=keyword to sort.",
        )
    owner = calls.owner()
    params = _list_params(owner, args, sort_by=None, sort_order="desc")
    found = ranked.listed(owner, types, params, mode=mode, min_score=args.get("min_score"))
    entries = [
        shapes.listed_item_data(item, score=score, match=match)
        for item, score, match in found.items
    ]
    more = params.offset + len(entries) < found.count
    return entries, found.count, more, found.degraded


def require_changes(data: dict[str, Any], names: str) -> None:
    if not data:
        raise ValidationFailed(
            {"non_field_errors": [f"Nothing to update: pass at least one of {names}."]},
            message=f"Nothing to update: pass at least one of {names} (expected_updated_at alone "
            "changes nothing).",
        )


def edits_in(edits: list[t.EditIn] | None) -> list[Edit] | None:
    """The ``edits`` parameter (pydantic ``EditIn``) as the editing core's ``Edit``s."""
    if edits is None:
        return None
    return [Edit(e.old_str, e.new_str, e.replace_all) for e in edits]
