"""What the tools of both servers share: who is calling, and turning items into results.

Tools are small adapters (STYLE): validate arguments, call one service or query, shape the result
with the same serializers as REST. No ORM here.
"""

from __future__ import annotations

from typing import Any, ClassVar

from content import item_types, queries, reads, representation
from content.history import Actor
from content.models import Item
from content.reads import Owner
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

    def _tag_counts(self) -> list[dict[str, Any]]:
        """Tags with counts over the areas the caller may read (as ``/api/tags/``)."""
        types = item_types.types_in(readable_areas(getattr(self.request, "auth", None)))
        return queries.tag_counts(self._owner(), include_inactive=False, types=types)

    def _actor(self) -> Actor:
        principal = getattr(self.request, "auth", None)
        return Actor(source=self.source, token_prefix=getattr(principal, "token_prefix", None))


def full_item(item: Item, start_line: int | None, end_line: int | None) -> dict[str, Any]:
    window = reads.line_window(item.content, start_line, end_line)
    return representation.item_data(item, window=window)


def page(owner: Owner, types: list[str], args: dict[str, Any]) -> dict[str, Any]:
    params = reads.list_params(
        {
            "q": args["query"],
            "tags": args["tags"],
            "tag_match": args["tag_match"],
            "sort_by": args["sort_by"],
            "sort_order": args["sort_order"],
            "limit": args["limit"],
            "offset": args["offset"],
        }
    )
    if len(types) == 1:
        total, items = queries.list_items(owner, item_types.model_for(types[0]), params)
    else:
        total, items = queries.list_content(owner, types, params)
    return representation.page_data(items, total, params.offset)


def require_changes(data: dict[str, Any], names: str) -> None:
    if not data:
        raise ValidationFailed(
            {"non_field_errors": [f"Nothing to update: pass at least one of {names}."]},
            message=f"Nothing to update: pass at least one of {names} (expected_updated_at alone "
            "changes nothing).",
        )
