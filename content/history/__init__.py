"""An item's history (SPEC §7): recording versions and events (``record``), the compact patch
format they are stored in (``codec``), and the diff between versions (``diff``).

Revert, a write built on history, is ``content.services.revert``. This package's front door
re-exports ``record``: ``from content import history; history.record_version(...)``.
"""

from __future__ import annotations

from content.history.diff import (
    MAX_DIFF_CHARS,
)
from content.history.record import (
    MAX_SOURCE_LENGTH,
    MAX_VERSION,
    PRUNE_EVERY,
    Actor,
    PruneReport,
    Reconstruction,
    VersionDiff,
    clean_source,
    erase,
    filled_fields,
    get_version,
    item_versions,
    latest_version,
    metadata_snapshot,
    previous_row,
    prune_all,
    prune_item,
    reconstruct,
    reconstruct_with_previous,
    record_created_versions,
    record_event,
    record_version,
    restore_data,
    version_diff,
)

__all__ = [
    "MAX_DIFF_CHARS",
    "MAX_SOURCE_LENGTH",
    "MAX_VERSION",
    "PRUNE_EVERY",
    "Actor",
    "PruneReport",
    "Reconstruction",
    "VersionDiff",
    "clean_source",
    "erase",
    "filled_fields",
    "get_version",
    "item_versions",
    "latest_version",
    "metadata_snapshot",
    "previous_row",
    "prune_all",
    "prune_item",
    "reconstruct",
    "reconstruct_with_previous",
    "record_created_versions",
    "record_event",
    "record_version",
    "restore_data",
    "version_diff",
]
