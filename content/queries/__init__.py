"""The one read layer: owner-scoped reads every door shares (REST, MCP, admin).

``items`` (one item: ``ItemRef``, ``get_owned``, its page, line windows, within-item search),
``lists`` (list SQL, tag counts, list parameters), ``history`` (history pages, versions, diffs),
``filters`` (saved filters as lists find them), ``context`` (the session overview) and ``cache``
(the content cache). The front door re-exports the first four.
"""

from __future__ import annotations

from content.queries.filters import (
    filter_data,
    filters_for_types,
    get_filter,
    owned_filters,
)
from content.queries.history import (
    diff_data,
    history_entry,
    history_page,
    history_summary,
    version_data,
    window_data,
)
from content.queries.items import (
    SEARCH_FIELDS,
    ItemRef,
    Owner,
    display_title,
    get_owned,
    get_owned_head,
    get_owned_slice,
    item_detail,
    line_window,
    parse_pk,
    related_items,
    within_item_search,
)
from content.queries.lists import (
    ListParams,
    active_counts,
    active_tagged,
    content_page,
    groups_q,
    item_lines,
    list_content,
    list_items,
    list_params,
    listed_q,
    one,
    one_with_content,
    owned,
    tag_counts,
    tag_types,
    top_tags,
    uses_fts,
)

__all__ = [
    "SEARCH_FIELDS",
    "ItemRef",
    "ListParams",
    "Owner",
    "active_counts",
    "active_tagged",
    "content_page",
    "diff_data",
    "display_title",
    "filter_data",
    "filters_for_types",
    "get_filter",
    "get_owned",
    "get_owned_head",
    "get_owned_slice",
    "groups_q",
    "history_entry",
    "history_page",
    "history_summary",
    "item_detail",
    "item_lines",
    "line_window",
    "list_content",
    "list_items",
    "list_params",
    "listed_q",
    "one",
    "one_with_content",
    "owned",
    "owned_filters",
    "parse_pk",
    "related_items",
    "tag_counts",
    "tag_types",
    "top_tags",
    "uses_fts",
    "version_data",
    "window_data",
    "within_item_search",
]
