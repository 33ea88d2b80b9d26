"""What every import format is turned into before the importer validates and saves it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(slots=True)
class ImportRecord:
    """One item as a file describes it: raw values, not yet normalised or validated.

    ``index`` is the entry's position in the file (SPEC §14). ``tags`` are Tiddly tag names for
    Tiddly JSON and already slugified names for Netscape files. ``lenient`` marks sources whose
    over-long titles/descriptions are shortened (with a warning) rather than skipped: browsers
    have no limits, Tiddly exports already respect them.
    """

    index: int
    type: str
    title: str | None = None
    description: str | None = None
    content: str | None = None
    tags: list[str] = field(default_factory=list)
    url: str | None = None
    name: str | None = None
    arguments: list[dict[str, Any]] | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_used_at: datetime | None = None
    archived_at: datetime | None = None
    deleted_at: datetime | None = None
    lenient: bool = False
    # Fields the file actually carries (an update only overwrites these).
    present: frozenset[str] = frozenset()


@dataclass(slots=True)
class ImportSkip:
    index: int
    reason: str
    title: str | None = None
    url: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"index": self.index, "reason": self.reason}
        if self.title:
            data["title"] = self.title
        if self.url:
            data["url"] = self.url
        return data
