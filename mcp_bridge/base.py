"""What the tools of both servers share: who is calling, and turning items into results.

Tools are small adapters (STYLE): validate arguments, call one service or query, shape the result
with the same serializers as REST. No ORM here.
"""

from __future__ import annotations

from typing import Any, ClassVar

from content import context, history, item_types, queries, reads, saved_filters, shapes
from content.history import Actor
from content.models import Item
from content.reads import Owner
from content.text.replace import Edit
from tiddly.errors import ValidationFailed
from tiddly.scopes import readable_areas


class ToolsetBase:
    """Mixed into each ``MCPToolset``: the package sets ``self.request`` (the DRF request) per call.

    Helpers are private (``_``-prefixed) so the package does not publish them as tools.
    """

    request: Any
    source: ClassVar[str]

    def _owner(self) -> Owner:
        user = self.request.user
        assert isinstance(user, Owner)  # the MCP view requires authentication
        return user

    def _tag_counts(self) -> list[shapes.TagCount]:
        """Tags with counts over the areas the caller may read (as ``/api/tags/``)."""
        types = item_types.types_in(readable_areas(getattr(self.request, "auth", None)))
        return queries.tag_counts(self._owner(), include_inactive=False, types=types)

    def _actor(self) -> Actor:
        principal = getattr(self.request, "auth", None)
        return Actor(source=self.source, token_prefix=getattr(principal, "token_prefix", None))


def full_item(item: Item, start_line: int | None, end_line: int | None) -> shapes.ItemData:
    window = reads.line_window(item.content, start_line, end_line)
    return shapes.item_data(item, window=window)


def page(owner: Owner, types: list[str], args: dict[str, Any]) -> shapes.ItemPage:
    params = reads.list_params(
        owner,
        {
            "filter_id": args.get("filter_id"),
            "q": args["query"],
            "tags": args["tags"],
            "tag_match": args["tag_match"],
            "sort_by": args["sort_by"],
            "sort_order": args["sort_order"],
            "limit": args["limit"],
            "offset": args["offset"],
        },
    )
    if len(types) == 1:
        total, items = queries.list_items(owner, item_types.model_for(types[0]), params)
    else:
        total, items = queries.list_content(owner, types, params)
    return shapes.page_data(items, total, params.offset)


def require_changes(data: dict[str, Any], names: str) -> None:
    if not data:
        raise ValidationFailed(
            {"non_field_errors": [f"Nothing to update: pass at least one of {names}."]},
            message=f"Nothing to update: pass at least one of {names} (expected_updated_at alone "
            "changes nothing).",
        )


# The most diff characters a history tool returns (as a dry run's diff): an agent's context is
# small, and the version itself can be read by lines.
DIFF_CHARS = 20_000


def edits_in(edits: list[Any] | None) -> list[Edit] | None:
    """The ``edits`` parameter (pydantic ``EditIn``) as the editing core's ``Edit``s."""
    if edits is None:
        return None
    return [Edit(e.old_str, e.new_str, e.replace_all) for e in edits]


def version_result(
    item: Item,
    version: int,
    start_line: int | None,
    end_line: int | None,
    include_diff: bool,
) -> shapes.Version:
    """An item at ``version`` as REST's ``GET …/history/{v}/`` shows it, plus its diff."""
    data = reads.version_data(item, version, start_line=start_line, end_line=end_line)
    if include_diff:
        diff = reads.diff_data(item, version, max_chars=DIFF_CHARS)
        data["diff"] = diff["diff"]
        data["diff_truncated"] = diff["truncated"]
    return data


def restore_result(item: Item, version: int) -> dict[str, Any]:
    number = history.latest_version(item)
    return {
        "id": str(item.pk),
        "updated_at": shapes.dt(item.updated_at),
        "version": number,
        "summary": f"Restored {item.label()} to version {version}; it is now version {number}.",
    }


def filter_list(owner: Owner, types: list[str]) -> dict[str, Any]:
    """The owner's saved filters that include any of this server's types."""
    found = saved_filters.filters_for_types(owner, types)
    return {"filters": [saved_filters.filter_data(f) for f in found]}


def overview(owner: Owner, types: list[str], recent: int, footer: str) -> shapes.Context:
    return context.overview(owner, types=types, recent=recent, footer=footer)
