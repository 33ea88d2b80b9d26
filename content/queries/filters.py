"""Saved filters (SPEC §11), the read side: finding the one a list names, and its JSON.

An expression is ``{"groups": [{"tags": [...]}, ...], "group_operator": "or"}``: an item matches a
group when it has all the group's tags and the filter when it matches any group (no groups = every
item of the filter's types). Writes live in ``content.services.filters``.
"""

from __future__ import annotations

import uuid
from typing import Any

from content import shapes
from content.models import SavedFilter
from content.shapes import dt
from tiddly.errors import NotFound

FIELDS = ("name", "content_types", "expression", "default_sort_by", "default_sort_order")


def get_filter(owner: Any, raw_id: object) -> SavedFilter:
    """The owner's filter, or not found (another owner's filter is simply not found)."""
    try:
        pk = uuid.UUID(str(raw_id))
    except ValueError:
        raise NotFound(f"No saved filter with id {raw_id!r} was found: ids are UUIDs.") from None
    found = SavedFilter.objects.filter(owner=owner, pk=pk).first()
    if found is None:
        raise NotFound(
            f"No saved filter with id {pk} was found. List yours with GET /api/filters/ "
            "(or the list_filters tool)."
        )
    return found


def owned_filters(owner: Any) -> Any:
    return SavedFilter.objects.filter(owner=owner).order_by("name", "id")


def filters_for_types(owner: Any, types: list[str]) -> list[SavedFilter]:
    """The owner's filters that include any of ``types`` (what one MCP server can show).

    The type test runs on the owner's few filter rows, not on items: ``content_types`` is a JSON
    list, and JSON containment is spelt differently on SQLite and PostgreSQL.
    """
    wanted = set(types)
    return [f for f in owned_filters(owner) if wanted & set(f.content_types)]


def filter_data(saved: SavedFilter) -> shapes.SavedFilter:
    return {
        "id": str(saved.pk),
        "name": saved.name,
        "content_types": list(saved.content_types),
        "expression": {
            "groups": [{"tags": tags} for tags in saved.groups],
            "group_operator": "or",
        },
        "default_sort_by": saved.default_sort_by,
        "default_sort_order": saved.default_sort_order,
        "created_at": dt(saved.created_at),
        "updated_at": dt(saved.updated_at),
    }
