"""Netscape bookmark entries as import records (SPEC §14): folders and TAGS become tags.

Folder names and ``TAGS`` become tags by slugifying them ("Dev Tools" → ``dev-tools``, "Café" →
``cafe``); names with no usable character are dropped with a warning. A name that changes is
reported (``rename``), and two different names never become one tag silently:

- symbols that are part of a word are spelled out — ``+`` plus, ``#`` sharp, ``&`` and, ``@``
  at — so ``C++`` is ``c-plus-plus``, ``C#`` ``c-sharp``, ``R&D`` ``r-and-d`` and ``C`` stays
  ``c``; standing alone between words ("Reise & Urlaub") they are punctuation (``reise-urlaub``);
- names that differ only in case, accents and word separators (spaces, ``-_/.,:;|``, quotes,
  brackets) are one tag ("Dev Tools", "dev_tools", "dev/tools"); any other pair that still
  slugifies alike within one file ("C", "C!") keeps the first name's tag and gives the later
  one a number (``c-2``), listed in the report.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from django.utils import timezone

from content import rules
from content.models import Bookmark
from content.portability.netscape import NetscapeEntry
from content.portability.records import ImportRecord

# Symbols spelled out as words in tags (see the module docstring).
SYMBOL_WORDS = {"+": "plus", "#": "sharp", "&": "and", "@": "at"}
# What separates words in a name; any other symbol ("C!", "C*") is part of what the name says.
_SEPARATORS = re.compile(r"[\s\-_/.,:;|'\"()\[\]{}<>\u2018\u2019\u201c\u201d]+")


# A symbol standing alone between words ("Reise & Urlaub") is punctuation, not part of a name.
_LONE_SYMBOLS = re.compile(r"(?<!\S)[+#&@]+(?!\S)")


def _ascii(name: str) -> str:
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return _LONE_SYMBOLS.sub(" ", folded)


def tag_slug(name: str) -> str:
    """A folder name or free-form tag as a Tiddly tag: ASCII, lower-case, single hyphens."""
    words: list[str] = []
    word: list[str] = []
    for char in _ascii(name):
        if char.isalnum():
            word.append(char)
            continue
        if word:
            words.append("".join(word))
            word = []
        if char in SYMBOL_WORDS:
            words.append(SYMBOL_WORDS[char])
    if word:
        words.append("".join(word))
    return "-".join(words)[: rules.limit("tag")].strip("-")


def tag_identity(name: str) -> str:
    """What makes two names the same tag: all but case, accents and separators."""
    return _SEPARATORS.sub("-", _ascii(name)).strip("-")


class NetscapeConverter:
    """Netscape entries as import records; folder and tag names slugified once per import.

    ``rename(old, new)`` hears of each name that is stored under another name."""

    def __init__(
        self, warn: Callable[[str], None], rename: Callable[[str, str], None] | None = None
    ) -> None:
        self._warn = warn
        self._rename = rename
        self._slugs: dict[str, str] = {}
        self._identities: dict[str, str] = {}  # slug -> identity of the first name given it
        self._now = timezone.now()

    def _slug(self, name: str) -> str:
        slug = self._slugs.get(name)
        if slug is None:
            slug = self._slugs[name] = self._new_slug(name)
            if not slug:
                self._warn(
                    f"The folder or tag '{name}' has no letters or digits usable in a tag "
                    "(a-z, 0-9); its bookmarks were imported without it."
                )
            elif slug != name and self._rename is not None:
                self._rename(name, slug)
        return slug

    def _new_slug(self, name: str) -> str:
        base = tag_slug(name)
        if not base:
            return base
        identity = tag_identity(name)
        slug, number = base, 1
        while self._identities.setdefault(slug, identity) != identity:
            number += 1
            suffix = f"-{number}"
            slug = base[: rules.limit("tag") - len(suffix)].strip("-") + suffix
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
