"""THE unified diff: what a dry run shows (SPEC §4.3) and what history shows (SPEC §6).

``diff -u`` text numbered in the whole texts and bounded in characters (and lines). The costly
part of diffing a large document is the part that did not change, so only windows of lines
around the changes are diffed: around the known ``spans`` of an edit plan, or else around the one
region between the common prefix and suffix (chunked comparisons, in C). Each window's lines are
aligned by diff-match-patch (Myers: a minimal diff) in line mode under a deadline, so a worst case
degrades to a coarser but still correct diff rather than a slow one; hunks are grouped as
difflib groups them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from diff_match_patch import diff_match_patch

from content.text.lines import lines_back, lines_forward

__all__ = ["DIFF_MAX_CHARS", "TextDiff", "unified_diff"]

DIFF_MAX_CHARS = 20_000  # what a dry run shows (SPEC §4.3); history passes its own bounds
DIFF_TIMEOUT_SECONDS = 0.25
_MAX_DISTINCT_LINES = 0x10FFFF  # diff-match-patch's line mode: one code point per distinct line
_NO_NEWLINE = "\n\\ No newline at end of file\n"

Opcode = tuple[str, int, int, int, int]  # (tag, a_start, a_end, b_start, b_end), as difflib's

_DMP = diff_match_patch()
_DMP.Diff_Timeout = DIFF_TIMEOUT_SECONDS


@dataclass(frozen=True)
class TextDiff:
    text: str  # the unified diff; "" when the texts are equal
    truncated: bool  # cut at max_chars (possibly inside a line) or max_lines
    added: int  # whole "+" and "-" lines shown
    removed: int


def unified_diff(
    old: str,
    new: str,
    *,
    old_label: str = "before",
    new_label: str = "after",
    context: int = 3,
    max_chars: int = DIFF_MAX_CHARS,
    max_lines: int | None = None,
    spans: Sequence[tuple[int, int, str]] | None = None,
) -> TextDiff:
    """A unified diff from ``old`` to ``new``, cut at ``max_chars`` characters / ``max_lines``.

    ``spans`` are the ``(start, end, new_text)`` changes of ``old`` that make ``new`` (sorted,
    non-overlapping; ``EditPlan.spans``); without them the one region between the common
    prefix and suffix is used. Only each changed region's lines plus ``context`` lines around it
    are aligned (regions closer than that share a hunk), and the hunk headers carry the lines'
    numbers in the whole texts. So a small change in a 100 000-line text costs a few C scans.
    The two header lines and every diff line count towards ``max_lines``. An unchanged text
    gives an empty diff.
    """
    if spans is None:
        spans = _changed_region(old, new)
    writer = _DiffWriter(f"--- {old_label}\n+++ {new_label}\n", max_chars, max_lines)
    for window in _diff_windows(old, spans, context):
        for line in _window_hunks(window, context):
            if not writer.add(line):
                return writer.result(truncated=True)
    return writer.result(truncated=False)


@dataclass(frozen=True)
class _DiffWindow:
    """Whole lines of both texts around a group of changes, and their first line numbers."""

    old_lines: list[str]
    new_lines: list[str]
    old_first: int  # 0-based line index in the old text
    new_first: int


class _DiffWriter:
    def __init__(self, header: str, max_chars: int, max_lines: int | None) -> None:
        self.header = header
        self.room = max_chars
        self.lines_left = max_lines
        self.pieces: list[str] = []
        self.added = self.removed = 0

    def add(self, piece: str) -> bool:
        """Append ``piece`` or as much as fits; False once something had to be cut."""
        mark = piece[0]
        if not self.pieces:
            self._take_lines(self.header.count("\n"))
            piece = self.header + piece
        if not self._take_lines(1):
            return False
        self.pieces.append(piece[: self.room])
        self.room -= len(piece)
        if self.room < 0:
            return False
        self.added += mark == "+"
        self.removed += mark == "-"
        return True

    def _take_lines(self, count: int) -> bool:
        if self.lines_left is None:
            return True
        self.lines_left -= count
        return self.lines_left >= 0

    def result(self, *, truncated: bool) -> TextDiff:
        return TextDiff("".join(self.pieces), truncated, self.added, self.removed)


def _changed_region(old: str, new: str) -> list[tuple[int, int, str]]:
    if old == new:
        return []
    prefix = _shared_prefix(old, new)
    suffix = _shared_suffix(old, new, min(len(old), len(new)) - prefix)
    return [(prefix, len(old) - suffix, new[prefix : len(new) - suffix])]


def _shared_prefix(a: str, b: str) -> int:
    """Length of the common prefix."""
    return _shared_run(min(len(a), len(b)), lambda i, j: a[i:j] == b[i:j])


def _shared_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most ``limit``."""
    len_a, len_b = len(a), len(b)
    return _shared_run(limit, lambda i, j: a[len_a - j : len_a - i] == b[len_b - j : len_b - i])


def _shared_run(limit: int, same: Callable[[int, int], bool]) -> int:
    """Length (at most ``limit``) of a run two strings share, where ``same(i, j)`` compares
    its characters ``i`` to ``j``: compared in doubling chunks then halved (C-speed)."""
    done, step = 0, 256
    while step and done < limit:
        stop = min(done + step, limit)
        if same(done, stop):
            done, step = stop, step * 2
        else:
            step //= 2
    return done


def _diff_windows(
    old: str, spans: Sequence[tuple[int, int, str]], context: int
) -> Iterator[_DiffWindow]:
    """Group the changes whose ``context`` lines touch; yield each group's window of lines."""
    lines_before = _LineCounter(old)
    new_shift = 0  # lines the earlier groups added to the new text
    group: list[tuple[int, int, str]] = []
    last_line = -1
    for start, end, new_text in spans:
        if old[start:end] == new_text:
            continue
        first = lines_before(start)
        if group and first - context > last_line + context + 1:
            window = _window(old, group, context, new_shift)
            new_shift += len(window.new_lines) - len(window.old_lines)
            yield window
            group = []
        group.append((start, end, new_text))
        # the line after a replaced newline joins the change unless new_text ends one too;
        # taking it always only widens the window, and the alignment trims surplus context
        last_line = lines_before(end)
    if group:
        yield _window(old, group, context, new_shift)


def _window(
    old: str, group: list[tuple[int, int, str]], context: int, new_shift: int
) -> _DiffWindow:
    low = lines_back(old, group[0][0], context, 0)
    high = lines_forward(old, group[-1][1], context, len(old))
    high += high < len(old)  # take the last line's newline
    pieces = [old[low : group[0][0]]]
    for (_, end, new_text), following in zip(group, [*group[1:], (high, high, "")], strict=True):
        pieces += (new_text, old[end : following[0]])
    old_first = old.count("\n", 0, low)
    return _DiffWindow(
        _split_lines(old[low:high]), _split_lines("".join(pieces)), old_first, old_first + new_shift
    )


class _LineCounter:
    """0-based line index of ascending offsets, counting newlines only since the last one."""

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 0

    def __call__(self, offset: int) -> int:
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _split_lines(text: str) -> list[str]:
    """Lines keeping their ``"\\n"`` (difflib's form); only ``"\\n"`` ends a line."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _window_hunks(window: _DiffWindow, context: int) -> Iterator[str]:
    """The hunks of one window, as text, numbered in the whole texts."""
    a, b = window.old_lines, window.new_lines
    for group in _grouped(_line_opcodes(a, b), context):
        first, last = group[0], group[-1]
        old_range = _hunk_range(window.old_first + first[1], last[2] - first[1])
        new_range = _hunk_range(window.new_first + first[3], last[4] - first[3])
        yield f"@@ -{old_range} +{new_range} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (_diff_line(" ", line) for line in a[i1:i2])
                continue
            yield from (_diff_line("-", line) for line in a[i1:i2])
            yield from (_diff_line("+", line) for line in b[j1:j2])


def _line_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """difflib-style opcodes from diff-match-patch on one code point per distinct line.

    A delete next to an insert becomes one ``replace`` so "-" lines always come first. Windows
    without a shared line (``replace_all`` touching every line) need no alignment at all.
    """
    codes: dict[str, int] = {}
    old_lines, new_lines = set(a), set(b)
    if old_lines.isdisjoint(new_lines) or len(old_lines | new_lines) > _MAX_DISTINCT_LINES:
        return [("replace", 0, len(a), 0, len(b))]
    a_chars = "".join(chr(codes.setdefault(line, len(codes))) for line in a)
    b_chars = "".join(chr(codes.setdefault(line, len(codes))) for line in b)
    opcodes: list[Opcode] = []
    i = j = 0
    for kind, chars in _DMP.diff_main(a_chars, b_chars, False):
        size = len(chars)
        if kind == diff_match_patch.DIFF_EQUAL:
            opcodes.append(("equal", i, i + size, j, j + size))
            i, j = i + size, j + size
            continue
        i1, j1 = i, j
        if opcodes and opcodes[-1][0] != "equal":
            _, i1, _, j1, _ = opcodes.pop()
        if kind == diff_match_patch.DIFF_DELETE:
            i += size
        else:
            j += size
        tag = "replace" if i > i1 and j > j1 else "delete" if i > i1 else "insert"
        opcodes.append((tag, i1, i, j1, j))
    return opcodes


def _grouped(codes: Sequence[Opcode], context: int) -> Iterator[list[Opcode]]:
    """Hunks with up to ``context`` lines around changes, as difflib's ``get_grouped_opcodes``."""
    if not codes:
        return
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _hunk_range(first: int, length: int) -> str:
    """``start,length`` as ``diff -u`` writes it (1-based; an empty range names the line before)."""
    if length == 1:
        return str(first + 1)
    return f"{first + 1 if length else first},{length}"


def _diff_line(mark: str, line: str) -> str:
    return mark + line if line.endswith("\n") else mark + line + _NO_NEWLINE
