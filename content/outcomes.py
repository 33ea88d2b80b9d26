"""What a write did, as a value the shapes layer can render without importing the services.

``EditOutcome`` is returned by ``content.services.editing.edit_content`` and turned into JSON by
``content.shapes.edit_data``; it lives down here so that shapes never import services.
"""

from __future__ import annotations

from dataclasses import dataclass

from content.models import Item
from content.text import replace


@dataclass(frozen=True)
class EditOutcome:
    """What an edit request did (or, on a dry run, would do).

    ``results`` has one entry per requested edit; ``diff`` is set on dry runs only.
    """

    item: Item
    results: tuple[replace.EditResult, ...]
    changed: bool
    batch: bool = False  # the request sent ``edits`` (answers list one result per edit)
    replace_all: bool = False  # the single edit had ``replace_all`` (answers count replacements)
    dry_run: bool = False
    diff: str | None = None
    diff_truncated: bool = False

    @property
    def match_type(self) -> str:
        return self.results[0].match_type

    @property
    def line(self) -> int:
        return self.results[0].line

    @property
    def replacements(self) -> int:
        return sum(result.replacements for result in self.results)
