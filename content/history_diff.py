"""Bounded unified diffs between two versions of a text, for people and agents (SPEC §6).

The expensive part of diffing a large document is the part that did not change. The common prefix
and suffix are trimmed first (chunked comparisons at C speed), so a one-line edit of a 10 MB note
diffs a handful of lines. What remains is diffed line by line with diff-match-patch (Myers, with
a deadline: a worst case degrades to a coarser but still correct diff rather than a slow one), and
the output stops after ``max_lines`` lines or ``max_chars`` characters (``truncated``).
Pure functions, no Django.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from diff_match_patch import diff_match_patch

from content.history_codec import _common_prefix_len, _common_suffix_len

__all__ = ["TextDiff", "unified_diff"]

MAX_DIFF_LINES = 5_000
MAX_DIFF_CHARS = 1_000_000
DIFF_TIMEOUT_SECONDS = 0.25
_MAX_DISTINCT_LINES = 0x10FFFF  # one code point per distinct line

Opcode = tuple[str, int, int, int, int]  # (tag, a_start, a_end, b_start, b_end), like difflib

_DMP = diff_match_patch()
_DMP.Diff_Timeout = DIFF_TIMEOUT_SECONDS


@dataclass(frozen=True)
class TextDiff:
    text: str  # unified diff; "" when the texts are equal
    truncated: bool
    added: int  # lines added and removed, counted over the shown hunks
    removed: int


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
    if old == new:
        return TextDiff("", False, 0, 0)
    start, old_end, new_end = _changed_window(old, new, context)
    offset = old.count("\n", 0, start)
    a, b = _lines(old[start:old_end]), _lines(new[start:new_end])
    out = _Output(max_lines, max_chars)
    out.add(f"--- {old_label}\n")
    out.add(f"+++ {new_label}\n")
    for group in _grouped(_line_opcodes(a, b), context):
        if not _write_hunk(out, group, a, b, offset):
            break
    return TextDiff("".join(out.lines), out.truncated, out.added, out.removed)


def _changed_window(old: str, new: str, context: int) -> tuple[int, int, int]:
    """Start (shared) and ends (old, new) of the changed lines plus ``context`` lines each side."""
    prefix = _common_prefix_len(old, new)
    suffix = _common_suffix_len(old, new, prefix)
    start = old.rfind("\n", 0, prefix) + 1
    for _ in range(context):
        if start == 0:
            break
        start = old.rfind("\n", 0, start - 1) + 1
    # The suffix is shared, so walking forwards from it finds the same lines in both texts.
    old_end, new_end = len(old) - suffix, len(new) - suffix
    for _ in range(context + 1):
        newline = old.find("\n", old_end)
        if newline == -1:
            return start, len(old), len(new)
        old_end, new_end = newline + 1, new_end + (newline + 1 - old_end)
        if old_end == len(old):
            break
    return start, old_end, new_end


def _lines(text: str) -> list[str]:
    """Lines split on \\n only (str.splitlines also splits on \\r, \\f, \\u2028…)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _line_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    codes: dict[str, int] = {}
    if len(set(a) | set(b)) > _MAX_DISTINCT_LINES:
        return [("replace", 0, len(a), 0, len(b))]
    a_chars = "".join(chr(codes.setdefault(line, len(codes))) for line in a)
    b_chars = "".join(chr(codes.setdefault(line, len(codes))) for line in b)
    opcodes: list[Opcode] = []
    i = j = 0
    for kind, chars in _DMP.diff_main(a_chars, b_chars, False):
        n = len(chars)
        if kind == diff_match_patch.DIFF_EQUAL:
            opcodes.append(("equal", i, i + n, j, j + n))
            i, j = i + n, j + n
        elif kind == diff_match_patch.DIFF_DELETE:
            opcodes.append(("delete", i, i + n, j, j))
            i += n
        else:
            opcodes.append(("insert", i, i, j, j + n))
            j += n
    return opcodes


def _grouped(codes: list[Opcode], n: int) -> Iterator[list[Opcode]]:
    """Hunks with up to ``n`` lines of context (difflib.SequenceMatcher.get_grouped_opcodes)."""
    if not codes:
        return
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


class _Output:
    def __init__(self, max_lines: int, max_chars: int) -> None:
        self.lines: list[str] = []
        self.chars = 0
        self.max_lines, self.max_chars = max_lines, max_chars
        self.truncated = False
        self.added = self.removed = 0

    def add(self, line: str) -> bool:
        if len(self.lines) >= self.max_lines or self.chars + len(line) > self.max_chars:
            self.truncated = True
            return False
        self.lines.append(line)
        self.chars += len(line)
        return True


def _write_hunk(out: _Output, group: list[Opcode], a: list[str], b: list[str], offset: int) -> bool:
    first, last = group[0], group[-1]
    old_range = _range(first[1] + offset, last[2] + offset)
    new_range = _range(first[3] + offset, last[4] + offset)
    if not out.add(f"@@ -{old_range} +{new_range} @@\n"):
        return False
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            lines = [(" ", line) for line in a[i1:i2]]
        else:
            lines = [("-", line) for line in a[i1:i2]] + [("+", line) for line in b[j1:j2]]
        for mark, line in lines:
            if not out.add(_diff_line(mark, line)):
                return False
            out.added += mark == "+"
            out.removed += mark == "-"
    return True


def _diff_line(mark: str, line: str) -> str:
    if line.endswith("\n"):
        return mark + line
    return f"{mark}{line}\n\\ No newline at end of file\n"


def _range(start: int, stop: int) -> str:
    """A unified-diff range, as difflib writes it: 1-based start, then the length if not 1."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + (1 if length else 0)},{length}"
