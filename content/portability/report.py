"""What an import answers (SPEC §14): counts, and bounded lists of what it did not do as asked.

The report is bounded whatever the file holds: a file of a million repeats must not answer with
a million reasons. Each list keeps its first entries in file order and a count of all of them.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from content import item_types
from content.portability.records import ImportSkip, cut

SKIPPED_SHOWN = 1000
ERRORS_SHOWN = 100
MATCHED_SHOWN = 1000
RENAMED_SHOWN = 1000


def _counts() -> dict[str, int]:
    """Per item type; ``filter`` and ``relationship`` join when the file carries any."""
    return dict.fromkeys(item_types.type_names(), 0)


@dataclass(slots=True)
class ImportMatch:
    """An entry that is an item the account holds already, and how the import found it."""

    index: int
    type: str
    id: str
    matched_by: str  # "id", or the field whose value matched ("url", "name")
    action: str  # "updated" or "skipped"

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "type": self.type,
            "id": self.id,
            "matched_by": self.matched_by,
            "action": self.action,
        }


@dataclass
class ImportReport:
    """Counts of everything, and the first ``SKIPPED_SHOWN`` skips (in file order),
    ``MATCHED_SHOWN`` matches, ``RENAMED_SHOWN`` renamed tags and ``ERRORS_SHOWN`` warnings:
    memory stays constant however many entries there are."""

    created: dict[str, int] = field(default_factory=_counts)
    updated: dict[str, int] = field(default_factory=_counts)
    skipped_count: int = 0
    errors: list[str] = field(default_factory=list)
    errors_count: int = 0
    matched: list[ImportMatch] = field(default_factory=list)
    matched_count: int = 0
    tags_renamed: dict[str, str] = field(default_factory=dict)
    tags_renamed_count: int = 0
    # A max-heap (negated index) of the lowest-indexed skips seen so far.
    _skips: list[tuple[int, int, ImportSkip]] = field(default_factory=list)

    def skip(self, skip: ImportSkip) -> None:
        self.skipped_count += 1
        entry = (-skip.index, -self.skipped_count, skip)
        if len(self._skips) < SKIPPED_SHOWN:
            heapq.heappush(self._skips, entry)
        elif entry > self._skips[0]:
            heapq.heapreplace(self._skips, entry)

    def warn(self, message: str) -> None:
        self.errors_count += 1
        if len(self.errors) < ERRORS_SHOWN:
            self.errors.append(message)

    def match(self, match: ImportMatch) -> None:
        # Entries are matched batch by batch in file order, so the first ones are the lowest.
        self.matched_count += 1
        if len(self.matched) < MATCHED_SHOWN:
            self.matched.append(match)

    def rename(self, old: str, new: str) -> None:
        """A tag name from the file that is stored under another name (once per name)."""
        if old in self.tags_renamed:
            return
        self.tags_renamed_count += 1
        if len(self.tags_renamed) < RENAMED_SHOWN:
            self.tags_renamed[old] = new

    @property
    def skipped(self) -> list[ImportSkip]:
        """The skips the report lists, in file order."""
        return [entry[2] for entry in sorted(self._skips, reverse=True)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": dict(self.created),
            "updated": dict(self.updated),
            "skipped": [s.as_dict() for s in self.skipped],
            "skipped_count": self.skipped_count,
            "matched": [m.as_dict() for m in self.matched],
            "matched_count": self.matched_count,
            "tags_renamed": [
                {"from": cut(old), "to": new} for old, new in self.tags_renamed.items()
            ],
            "tags_renamed_count": self.tags_renamed_count,
            "errors": list(self.errors),
            "errors_count": self.errors_count,
        }
