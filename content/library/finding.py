"""The library's one door to search: the ranking ``/api/search/`` and MCP ``search_items`` use.

Kept in one module so that where search lives is named once here.
"""

from __future__ import annotations

from content.search.ranking import Listed, listed

__all__ = ["Listed", "listed"]
