"""Bounded unified diffs between two versions of a text, for people and agents (SPEC §6).

The diff is the one a dry run shows (``content.text.diff``: only the changed lines are aligned,
so a one-line edit of a 10 MB note diffs a handful of lines); history shows more of it.
"""

from __future__ import annotations

from content.text.diff import TextDiff
from content.text.diff import unified_diff as text_diff

__all__ = ["MAX_DIFF_CHARS", "MAX_DIFF_LINES", "TextDiff", "unified_diff"]

MAX_DIFF_LINES = 5_000
MAX_DIFF_CHARS = 1_000_000


def unified_diff(
    old: str,
    new: str,
    *,
    old_label: str = "before",
    new_label: str = "after",
    context: int = 3,
    max_lines: int = MAX_DIFF_LINES,
    max_chars: int = MAX_DIFF_CHARS,
) -> TextDiff:
    """A ``diff -u`` style diff of ``old`` → ``new`` with ``context`` lines around each change."""
    return text_diff(
        old,
        new,
        old_label=old_label,
        new_label=new_label,
        context=context,
        max_lines=max_lines,
        max_chars=max_chars,
    )
