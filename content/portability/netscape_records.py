"""Netscape bookmark entries as import records (SPEC §14): folders and TAGS become tags.

Folder names and ``TAGS`` become tags by slugifying them ("Dev Tools" → ``dev-tools``, "Café" →
``cafe``); names with no usable character are dropped with a warning.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from django.utils import timezone

from content import rules
from content.models import Bookmark
from content.portability.netscape import NetscapeEntry
from content.portability.records import ImportRecord


def tag_slug(name: str) -> str:
    """A folder name or free-form tag as a Tiddly tag: ASCII, lower-case, single hyphens."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    out: list[str] = []
    for char in folded:
        if char.isalnum():
            out.append(char)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")[: rules.limit("tag")].strip("-")


class NetscapeConverter:
    """Netscape entries as import records; folder and tag names slugified once per import."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self._warn = warn
        self._slugs: dict[str, str] = {}
        self._now = timezone.now()

    def _slug(self, name: str) -> str:
        slug = self._slugs.get(name)
        if slug is None:
            slug = self._slugs[name] = tag_slug(name)
            if not slug:
                self._warn(
                    f"The folder or tag '{name}' has no letters or digits usable in a tag "
                    "(a-z, 0-9); its bookmarks were imported without it."
                )
        return slug

    def record(self, entry: NetscapeEntry) -> ImportRecord:
        tags = [s for s in map(self._slug, [*entry.folders, *entry.tags]) if s]
        present = {"title", "tags"}
        present.update(
            name
            for name, value in (
                ("description", entry.description),
                ("content", entry.notes),
                ("archived_at", entry.archived or None),
            )
            if value
        )
        updated = entry.last_modified
        if entry.add_date and (updated is None or updated < entry.add_date):
            updated = entry.add_date
        return ImportRecord(
            index=entry.index,
            type=Bookmark.type_name,
            title=entry.title or None,
            description=entry.description,
            content=entry.notes,
            tags=tags,
            type_fields={"url": entry.url},
            created_at=entry.add_date,
            updated_at=updated,
            archived_at=self._now if entry.archived else None,
            lenient=True,
            present=frozenset(present),
        )
