"""Lines as editors show them: counting, partial reads (line windows) and walking between lines.

Lines are 1-based and split on ``"\\n"`` only: ``count_lines(t) == len(t.split("\\n"))`` and a
``"\\r"`` before a newline stays part of its line. Items may hold 10,000,000 characters, so a
partial read never builds a list of all lines: newlines are counted and found in C.
"""

from __future__ import annotations

from dataclasses import dataclass

# Jumping to line N counts newlines per chunk (C speed) instead of one find() per line.
_SKIP_CHUNK = 1 << 16
_SKIP_BY_FIND = 32


class LineRangeError(ValueError):
    """A partial-read line range is invalid; ``str(exc)`` is the user-facing message."""


@dataclass(frozen=True)
class LineWindow:
    """The result of a (possibly partial) read: the selected lines joined by ``"\\n"``."""

    content: str
    total_lines: int
    start_line: int
    end_line: int
    is_partial: bool


def count_lines(text: str) -> int:
    """Number of lines as editors show them: ``""`` -> 1, ``"a\\n"`` -> 2 (no splitting)."""
    return text.count("\n") + 1


def read_lines(
    text: str | None, start_line: int | None = None, end_line: int | None = None
) -> LineWindow | None:
    """Cut ``text`` to lines ``start_line..end_line`` (SPEC §4.1).

    Returns ``None`` for null text without line parameters. Defaults are the first and the last
    line; an ``end_line`` past the end is clamped. ``is_partial`` is true iff a parameter was
    given. Raises ``LineRangeError`` for any parameter on null text, a value < 1, a start past
    the last line or a start after the end. Cost: one newline count plus a scan to ``end_line``.
    """
    if text is None:
        if start_line is None and end_line is None:
            return None
        raise LineRangeError("Content is empty; cannot retrieve lines")
    total = count_lines(text)
    start, end = _validated_range(start_line, end_line, total)
    is_partial = start_line is not None or end_line is not None
    if start == 1 and end == total:
        return LineWindow(text, total, start, end, is_partial)
    begin = _skip_newlines(text, 0, start - 1)
    stop = len(text) if end == total else _skip_newlines(text, begin, end - start + 1) - 1
    return LineWindow(text[begin:stop], total, start, end, is_partial)


def _validated_range(start_line: int | None, end_line: int | None, total: int) -> tuple[int, int]:
    """Apply the defaults, check the range in SPEC order and clamp the end."""
    if start_line is not None and start_line < 1:
        raise LineRangeError("start_line must be >= 1")
    if end_line is not None and end_line < 1:
        raise LineRangeError("end_line must be >= 1")
    start = 1 if start_line is None else start_line
    end = total if end_line is None else end_line
    if start > total:
        raise LineRangeError(f"start_line ({start}) exceeds total lines ({total})")
    if start > end:
        raise LineRangeError(f"start_line ({start}) must be <= end_line ({end})")
    return start, min(end, total)


def _skip_newlines(text: str, pos: int, count: int) -> int:
    """Offset just after the ``count``-th newline at or after ``pos``; -1 if there are fewer.

    Whole chunks are skipped with ``str.count``; the chunk holding the target is halved until
    only a few newlines are left, which ``str.find`` then walks. So the cost is a C scan of the
    distance covered, whatever the line lengths.
    """
    size, length = _SKIP_CHUNK, len(text)
    while count > _SKIP_BY_FIND:
        stop = min(pos + size, length)
        found = text.count("\n", pos, stop)
        if found >= count:
            size //= 2
        elif stop == length:
            return -1
        else:
            count, pos = count - found, stop
    for _ in range(count):
        newline = text.find("\n", pos)
        if newline < 0:
            return -1
        pos = newline + 1
    return pos


class LineStarts:
    """Offsets of line starts (0-based index), walking forward from the last one asked for."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._index = 0
        self._offset = 0

    def __call__(self, index: int) -> int:
        if index < self._index:
            self._index, self._offset = 0, 0
        self._offset = _skip_newlines(self._text, self._offset, index - self._index)
        self._index = index
        return self._offset


def lines_back(text: str, offset: int, lines: int, floor: int) -> int:
    """Start of the line ``lines`` above the one holding ``offset``, but not before ``floor``."""
    for _ in range(lines + 1):
        offset = text.rfind("\n", floor, offset)
        if offset < 0:
            return floor
    return offset + 1


def lines_forward(text: str, offset: int, lines: int, ceiling: int) -> int:
    """End of the line ``lines`` below the one holding ``offset`` (before its newline), but not
    past ``ceiling``."""
    for _ in range(lines + 1):
        offset = text.find("\n", offset, ceiling)
        if offset < 0:
            return ceiling
        offset += 1
    return offset - 1
