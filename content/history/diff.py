"""Bounded unified diffs between two versions of a text, for people and agents (SPEC §6).

The diff is the one a dry run shows (``content.text.diff``: only the changed lines are aligned,
so a one-line edit of a 10 MB note diffs a handful of lines); history shows more of it.
"""

from __future__ import annotations

from functools import partial

from content.text.diff import TextDiff
from content.text.diff import unified_diff as text_diff

__all__ = ["MAX_DIFF_CHARS", "MAX_DIFF_LINES", "TextDiff", "unified_diff"]

MAX_DIFF_LINES = 5_000
MAX_DIFF_CHARS = 1_000_000


#: ``unified_diff(old, new, *, old_label=, new_label=, context=3)``: the dry runs' diff with
#: history's larger bounds.
unified_diff = partial(text_diff, max_lines=MAX_DIFF_LINES, max_chars=MAX_DIFF_CHARS)
