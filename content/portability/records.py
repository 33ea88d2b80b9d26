"""What every import format is turned into before the importer validates and saves it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(slots=True)
class ImportRecord:
    """One item as a file describes it: raw values, not yet normalised or validated.

    ``index`` is the entry's position in the file (SPEC §14). ``tags`` are Tiddly tag names for
    Tiddly JSON and already slugified names for Netscape files. ``type_fields`` holds the values
    the file gives for the type's own fields (its model's ``extra_fields``: a bookmark's url, a
    prompt's name and arguments), checked by the model's ``apply_type_fields``. ``lenient`` marks sources whose
    over-long titles/descriptions are shortened (with a warning) rather than skipped: browsers
    have no limits, Tiddly exports already respect them.
    """

    index: int
    type: str
    title: str | None = None
    description: str | None = None
    content: str | None = None
    tags: list[str] = field(default_factory=list)
    type_fields: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_used_at: datetime | None = None
    archived_at: datetime | None = None
    deleted_at: datetime | None = None
    lenient: bool = False
    # Fields the file actually carries (an update only overwrites these).
    present: frozenset[str] = frozenset()
    # The item's id in the file (Tiddly JSON): relationships in the same file name their ends by it.
    source_id: str | None = None

    @property
    def url(self) -> str | None:
        """The URL a skip reports (SPEC §14), when the entry has one."""
        value = self.type_fields.get("url")
        return value if isinstance(value, str) else None


# A skip echoes the entry's title and URL cut to this many characters (SPEC §14).
SKIP_FIELD_CHARS = 200


def cut(value: str, limit: int = SKIP_FIELD_CHARS) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


@dataclass(slots=True)
class ImportSkip:
    index: int
    reason: str
    title: str | None = None
    url: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"index": self.index, "reason": self.reason}
        if self.title:
            data["title"] = cut(self.title)
        if self.url:
            data["url"] = cut(self.url)
        return data
