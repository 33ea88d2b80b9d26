"""The admin for bookmarks, notes, tags and version history (SPEC §9); prompts reuse ``ItemAdmin``.

Split by concern: ``filters``, ``forms`` (validated and saved by the services), ``actions``
(lifecycle actions), ``items`` (the item admins), ``item_history`` (history on an item's page),
``portability`` (the Import page and the export actions every item list has), ``tags``,
``history`` (the read-only version list), ``sharing`` and ``webhooks`` (webhooks, their
deliveries, "Send ping"). Importing the package registers them.
"""

from content.admin import history, items, saved_filters, sharing, tags, webhooks

__all__ = ["history", "items", "saved_filters", "sharing", "tags", "webhooks"]
