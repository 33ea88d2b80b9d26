"""Every write, by subject; REST views, the admin and MCP tools call these.

Each service is keyword-only, runs in one transaction, takes the owner, and raises a domain
error on bad input — in which case nothing is written. Subjects: ``items`` (create, update,
states), ``editing`` (str-replace), ``tags``, ``filters``, ``relationships``, ``revert``. New
subjects (capture, the search index, the change log, webhooks, share links) join as modules here.
The front door re-exports items, editing, tags and filters.
"""

from __future__ import annotations

# The types the services take, so a caller needs only this package to call them.
from content.history import Actor
from content.queries import ItemRef, Owner
from content.services.editing import (
    EditOutcome,
    edit_content,
)
from content.services.filters import (
    check_filter,
    create_filter,
    delete_filter,
    update_filter,
)
from content.services.items import (
    NO_PRECONDITION,
    CreateOptions,
    ItemFields,
    Precondition,
    archive_item,
    check_create,
    check_update,
    create_item,
    delete_item_permanently,
    item_fields,
    restore_item,
    restore_version,
    track_usage,
    trash_item,
    unarchive_item,
    update_item,
)
from content.services.tags import (
    check_rename_tag,
    delete_tag,
    rename_tag,
)

__all__ = [
    "NO_PRECONDITION",
    "Actor",
    "CreateOptions",
    "EditOutcome",
    "ItemFields",
    "ItemRef",
    "Owner",
    "Precondition",
    "archive_item",
    "check_create",
    "check_filter",
    "check_rename_tag",
    "check_update",
    "create_filter",
    "create_item",
    "delete_filter",
    "delete_item_permanently",
    "delete_tag",
    "edit_content",
    "item_fields",
    "rename_tag",
    "restore_item",
    "restore_version",
    "track_usage",
    "trash_item",
    "unarchive_item",
    "update_filter",
    "update_item",
]
