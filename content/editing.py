"""The text-editing core: line counting, partial reads, within-item search and str-replace matching.

Pure functions on ``str`` (no Django, no ORM) so the REST views, the admin and the MCP tools share
one implementation through the services, and so it can be tested fast and property-tested.

Lines are 1-based and split on ``"\\n"`` only: ``count_lines(t) == len(t.split("\\n"))`` and a
``"\\r"`` before a newline stays part of its line.

Items may hold 10,000,000 characters, so every function here is linear in the text and does its
scanning in C (``str.find``/``count``/``split``/``join``): a partial read or a unique match never
builds a list of all lines, and a match reported with context never re-scans the document.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, repeat
from operator import getitem, sub

from rapidfuzz import fuzz, process

EXACT = "exact"
WHITESPACE_NORMALIZED = "whitespace_normalized"
INDENTATION_RELATIVE = "indentation_relative"

MAX_REPORTED_MATCHES = 20
MATCH_CONTEXT_LINES = 2
# The most characters a context shows on either side of its match (see ``_context``): enough for
# ten ordinary lines in a search; 20 multiple_matches contexts stay well under 20 KB.
SEARCH_CONTEXT_CHARS = 2_000
MATCH_CONTEXT_CHARS = 250
ELLIPSIS = "…"

NO_MATCH_MESSAGE = "The specified text was not found in the content"
NO_MATCH_SUGGESTION = (
    "Verify the text exists and check for whitespace differences or recent edits; "
    "use search to get the exact current text."
)
MULTIPLE_MATCHES_SUGGESTION = "Include more surrounding context to ensure uniqueness"

# What level 2 strips from the end of every line; "\r" makes CRLF compare equal to LF.
_TRAILING_WS = " \t\r"
_INDENT_WS = " \t"
_CLOSEST_MIN_CHARS = 4
_CLOSEST_SCORE_CUTOFF = 80
_CLOSEST_MAX_CHARS = 200
_CLOSEST_COMPARE_CHARS = 120
# Jumping to line N counts newlines per chunk (C speed) instead of one find() per line.
_SKIP_CHUNK = 1 << 16
_SKIP_BY_FIND = 32


# --- line counting and partial read -------------------------------------------------------------


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


class _LineStarts:
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


# --- within-item search -------------------------------------------------------------------------


@dataclass(frozen=True)
class TextMatch:
    """One occurrence: the 1-based line where it starts and the lines around it."""

    line: int
    context: str


def search_text(
    text: str, query: str, *, case_sensitive: bool = False, context_lines: int = 2
) -> list[TextMatch]:
    """Every non-overlapping literal occurrence of ``query``, left to right (SPEC §4.2).

    ``query`` is never a regex and may span lines. ``context`` holds the lines from
    ``line - context_lines`` to the match's last line ``+ context_lines``, clipped to the text
    and to ``SEARCH_CONTEXT_CHARS`` on each side of the match. Case-insensitive search
    lower-cases both sides. Raises ``ValueError`` for an empty query or a negative
    ``context_lines``.
    """
    return search_text_limited(
        text, query, case_sensitive=case_sensitive, context_lines=context_lines
    )[0]


def search_text_limited(
    text: str,
    query: str,
    *,
    case_sensitive: bool = False,
    context_lines: int = 2,
    limit: int | None = None,
) -> tuple[list[TextMatch], int]:
    """Like ``search_text``, but builds at most ``limit`` matches; also returns the total.

    Counting the remaining occurrences is cheap; building their contexts is what costs memory,
    so a query that occurs hundreds of thousands of times stays bounded.
    """
    _check_query(query)
    if context_lines < 0:
        raise ValueError("context_lines must be >= 0")
    matches: list[TextMatch] = []
    line, previous, total = 1, 0, 0
    for start, end in _occurrences(text, query, case_sensitive):
        total += 1
        if limit is not None and total > limit:
            continue
        line += text.count("\n", previous, start)
        previous = start
        matches.append(
            TextMatch(line, _context(text, start, end, context_lines, SEARCH_CONTEXT_CHARS))
        )
    return matches, total


def field_contains(text: str | None, query: str, *, case_sensitive: bool = False) -> bool:
    """Whether a single-value field (title, description) contains ``query``, as search does."""
    _check_query(query)
    if text is None:
        return False
    return next(_occurrences(text, query, case_sensitive), None) is not None


def _check_query(query: str) -> None:
    if not query:
        raise ValueError("query must not be empty")


def _occurrences(text: str, query: str, case_sensitive: bool) -> Iterator[tuple[int, int]]:
    """Spans ``[start, end)`` in ``text`` of the non-overlapping occurrences of ``query``."""
    if not case_sensitive:
        lowered_text, lowered_query = text.lower(), query.lower()
        # lower() maps every character to one character except "İ" (to two), so equal lengths
        # mean offsets in the lowered text are offsets in the original. Otherwise the regex
        # engine's case-insensitive matching keeps the offsets right (it folds "İ" to "i").
        if len(lowered_text) != len(text) or len(lowered_query) != len(query):
            pattern = re.compile(re.escape(query), re.IGNORECASE)
            yield from (match.span() for match in pattern.finditer(text))
            return
        text, query = lowered_text, lowered_query
    size = len(query)
    start = text.find(query)
    while start >= 0:
        yield start, start + size
        start = text.find(query, start + size)


def _context(text: str, start: int, end: int, lines: int, side: int) -> str:
    """``lines`` lines before the line holding ``start`` through ``lines`` after the one at ``end``.

    The line at ``end`` is the match's last line: a match ending in a newline ends on the next
    line (``line + newlines in the match``). Walks with rfind/find; never splits the text.

    At most ``side`` characters are taken on either side of the match, and a match longer than
    ``side`` keeps only its two ends: one line can be the whole document (minified JSON, base64),
    and a context must neither carry it nor scan it once per match. Whatever is cut is marked with
    ``…``.
    """
    floor, ceiling = max(0, start - side), min(len(text), end + side)
    begin = _lines_back(text, start, lines, floor)
    stop = _lines_forward(text, end, lines, ceiling)
    head = ELLIPSIS if begin == floor > 0 and text[floor - 1] != "\n" else ""
    tail = ELLIPSIS if stop == ceiling < len(text) and text[ceiling] != "\n" else ""
    if end - start > side:
        half = side // 2
        middle = text[start : start + half] + ELLIPSIS + text[end - half : end]
    else:
        middle = text[start:end]
    return head + text[begin:start] + middle + text[end:stop] + tail


def _lines_back(text: str, offset: int, lines: int, floor: int) -> int:
    """Start of the line ``lines`` above the one holding ``offset``, but not before ``floor``."""
    for _ in range(lines + 1):
        offset = text.rfind("\n", floor, offset)
        if offset < 0:
            return floor
    return offset + 1


def _lines_forward(text: str, offset: int, lines: int, ceiling: int) -> int:
    """End of the line ``lines`` below the one holding ``offset`` (before its newline), but not
    past ``ceiling``."""
    for _ in range(lines + 1):
        offset = text.find("\n", offset, ceiling)
        if offset < 0:
            return ceiling
        offset += 1
    return offset - 1


# --- str-replace --------------------------------------------------------------------------------

MAX_EDITS = 100


@dataclass(frozen=True)
class Edit:
    """One requested change: ``old_str`` (non-empty) by ``new_str``.

    With ``replace_all`` every match at the first level that finds any is replaced; otherwise
    exactly one match is required.
    """

    old_str: str
    new_str: str
    replace_all: bool = False


@dataclass(frozen=True)
class Replacement:
    """One matched span of the original text: replace ``text[start:end]`` by ``new_text``.

    ``line`` is the 1-based line where the span starts and ``edit_index`` the edit it belongs to.
    """

    match_type: str
    start: int
    end: int
    line: int
    new_text: str
    edit_index: int = 0

    def apply(self, text: str) -> str:
        """``text`` with the matched span replaced."""
        return text[: self.start] + self.new_text + text[self.end :]


@dataclass(frozen=True)
class EditResult:
    """What one edit matched: its level, the start line of its first match and the count."""

    match_type: str
    line: int
    replacements: int


class NoMatch(Exception):
    """No level found ``old_str``; ``suggestion`` names the closest line when one is close.

    ``edit_index`` is the 0-based index of the failing edit (set by ``plan_edits``).
    """

    def __init__(
        self,
        *,
        closest_line: int | None = None,
        closest_text: str | None = None,
        edit_index: int | None = None,
    ) -> None:
        super().__init__(NO_MATCH_MESSAGE)
        self.closest_line = closest_line
        self.closest_text = closest_text
        self.edit_index = edit_index
        self.suggestion = NO_MATCH_SUGGESTION
        if closest_line is not None:
            self.suggestion += f' Closest line (line {closest_line}): "{closest_text}"'


class MultipleMatches(Exception):
    """``old_str`` matched ``total`` places at the level ``match_type``.

    ``matches`` holds the first ``MAX_REPORTED_MATCHES`` with 2 lines of context each;
    ``edit_index`` is the 0-based index of the failing edit (set by ``plan_edits``).
    """

    suggestion = MULTIPLE_MATCHES_SUGGESTION

    def __init__(
        self,
        *,
        match_type: str,
        matches: list[TextMatch],
        total: int,
        edit_index: int | None = None,
    ) -> None:
        super().__init__(f"old_str matches {total} places ({match_type}); it must match one")
        self.match_type = match_type
        self.matches = matches
        self.total = total
        self.edit_index = edit_index


class OverlappingEdits(Exception):
    """Two edits matched overlapping spans of the original text.

    ``edit_indexes`` are the two edits (0-based, ascending) and ``lines`` the 1-based start
    lines of their overlapping matches, in the same order.
    """

    def __init__(self, *, edit_indexes: list[int], lines: list[int]) -> None:
        first, second = edit_indexes
        super().__init__(
            f"Edits {first} and {second} match overlapping text (lines {lines[0]} and "
            f"{lines[1]}); each edit must change a different part of the original content"
        )
        self.edit_indexes = edit_indexes
        self.lines = lines


@dataclass(frozen=True)
class EditPlan:
    """Every edit matched against the original ``text``: apply them all at once.

    ``results`` has one entry per edit, in request order; ``replacements`` holds every matched
    span (``Replacement``) sorted by position, non-overlapping, in offsets of ``text``.
    """

    text: str
    results: tuple[EditResult, ...]
    replacements: tuple[Replacement, ...]

    @cached_property
    def new_content(self) -> str:
        """The text with every span replaced, built in one pass of slices."""
        pieces: list[str] = []
        cursor = 0
        for replacement in self.replacements:
            pieces.append(self.text[cursor : replacement.start])
            pieces.append(replacement.new_text)
            cursor = replacement.end
        pieces.append(self.text[cursor:])
        return "".join(pieces)

    def apply(self) -> str:
        return self.new_content

    @property
    def changed(self) -> bool:
        """Whether any span's new text differs from what it replaces (the content changes)."""
        text = self.text
        return any(text[r.start : r.end] != r.new_text for r in self.replacements)

    @property
    def spans(self) -> list[tuple[int, int, str]]:
        """``(start, end, new_text)`` of every span, in offsets of the original text."""
        return [(r.start, r.end, r.new_text) for r in self.replacements]

    def reverse_ops(self) -> list[tuple[int, int, str]]:
        """The history patch ops undoing this plan: ``[pos, delete_len, insert_text]`` each.

        Positions are offsets in the NEW text, sorted and non-overlapping, as
        ``history_codec`` stores them; unchanged spans are left out, so no change is ``[]``.
        """
        ops: list[tuple[int, int, str]] = []
        shift = 0
        for replacement in self.replacements:
            old_text = self.text[replacement.start : replacement.end]
            if old_text != replacement.new_text:
                ops.append((replacement.start + shift, len(replacement.new_text), old_text))
            shift += len(replacement.new_text) - len(old_text)
        return ops

    def diff(self, *, context: int = 3, max_chars: int = 20_000) -> tuple[str, bool]:
        """The unified diff of the change (see ``unified_diff``), from the known spans."""
        return unified_diff(
            self.text, self.new_content, context=context, max_chars=max_chars, spans=self.spans
        )


def plan_edits(text: str, edits: Sequence[Edit]) -> EditPlan:
    """Match every edit against the ORIGINAL ``text`` (SPEC §4.3) and plan applying them all.

    Each edit is matched by progressive matching:

    1. ``exact``: non-overlapping verbatim occurrences.
    2. ``whitespace_normalized``: both sides compared with trailing spaces/tabs and the ``"\\r"``
       of CRLF stripped from every line; the match is mapped back to the original text (see
       ``_map_normalized``).
    3. ``indentation_relative``: whole lines equal up to one uniform shift of leading
       indentation (a prefix the agent stripped, added or swapped, e.g. tab for 4 spaces);
       ``new_str`` is re-indented by the same shift (see ``_reindent``), per match.

    The first level that finds anything decides. There an edit needs exactly one match
    (else ``MultipleMatches``) unless ``replace_all``, which takes every non-overlapping match.
    No match at any level raises ``NoMatch``; both carry the failing ``edit_index``. A
    whitespace-only ``old_str`` only matches exactly. Spans of different edits must not overlap
    (``OverlappingEdits``). Raises ``ValueError`` for no edits, more than ``MAX_EDITS`` or an
    empty ``old_str``.

    Cost: an exact edit is a few C scans of the text; the looser levels prepare line views of
    the text once for all edits, and every level is linear in the text (see level 3's notes).
    """
    if not edits:
        raise ValueError("edits must hold at least one edit")
    if len(edits) > MAX_EDITS:
        raise ValueError(f"edits must hold at most {MAX_EDITS} edits")
    for index, edit in enumerate(edits):
        if not edit.old_str:
            raise ValueError(f"old_str must not be empty (edit {index})")
    document = _Document(text)
    results: list[EditResult] = []
    replacements: list[Replacement] = []
    for index, edit in enumerate(edits):
        try:
            match_type, found = _match(document, edit.old_str, edit.replace_all)
        except (NoMatch, MultipleMatches) as exc:
            exc.edit_index = index
            raise
        results.append(EditResult(match_type, found.spans[0].line, found.total))
        replacements.extend(_replacements(match_type, found, edit.new_str, index))
    replacements.sort(key=lambda r: (r.start, r.end))
    _check_overlaps(replacements)
    return EditPlan(text, tuple(results), tuple(replacements))


def find_replacement(text: str, old_str: str, new_str: str) -> Replacement:
    """Locate the unique match of ``old_str`` in ``text`` (one edit of ``plan_edits``).

    One match gives a ``Replacement``; several raise ``MultipleMatches``; none at all raise
    ``NoMatch`` (both with ``edit_index`` 0). Raises ``ValueError`` for an empty ``old_str``.
    """
    return plan_edits(text, [Edit(old_str, new_str)]).replacements[0]


def replace_all(text: str, old_str: str, new_str: str) -> EditPlan:
    """Plan replacing every non-overlapping match of ``old_str`` at the first level with any.

    ``results[0].replacements`` is the count; raises ``NoMatch`` as ``plan_edits`` does.
    """
    return plan_edits(text, [Edit(old_str, new_str, replace_all=True)])


def _match(document: _Document, old_str: str, every: bool) -> tuple[str, _Found]:
    """The first level finding ``old_str`` and its matches: all when ``every``, else exactly one.

    Without ``every`` only the first ``MAX_REPORTED_MATCHES`` spans are located (the rest are
    counted) and several matches raise ``MultipleMatches``.
    """
    limit = None if every else MAX_REPORTED_MATCHES
    text = document.text
    match_type, found = EXACT, _exact(text, old_str, limit)
    if not found.total and not old_str.strip():
        raise NoMatch()
    if not found.total and _longest_line(old_str) in text:
        # else neither loose level can match: skip their setup
        match_type, found = WHITESPACE_NORMALIZED, _whitespace_normalized(document, old_str, limit)
        if not found.total:
            match_type, found = (
                INDENTATION_RELATIVE,
                _indentation_relative(document, old_str, limit),
            )
    if not found.total:
        raise _no_match(document, old_str)
    if found.total > 1 and not every:
        raise _multiple_matches(text, match_type, found)
    return match_type, found


def _multiple_matches(text: str, match_type: str, found: _Found) -> MultipleMatches:
    matches = [
        TextMatch(
            span.line,
            _context(text, span.start, span.end, MATCH_CONTEXT_LINES, MATCH_CONTEXT_CHARS),
        )
        for span in found.spans
    ]
    return MultipleMatches(match_type=match_type, matches=matches, total=found.total)


def _replacements(match_type: str, found: _Found, new_str: str, index: int) -> list[Replacement]:
    """One ``Replacement`` per span; level 3 re-indents ``new_str`` once per distinct shift."""
    reindented: dict[_Shift, str] = {}
    replacements = []
    for span in found.spans:
        new_text = new_str
        if span.indent is not None:
            new_text = reindented.get(span.indent) or reindented.setdefault(
                span.indent, _reindent(new_str, span.indent)
            )
        replacements.append(
            Replacement(match_type, span.start, span.end, span.line, new_text, index)
        )
    return replacements


def _check_overlaps(replacements: list[Replacement]) -> None:
    """Raise ``OverlappingEdits`` for the first two spans (sorted by start) that overlap.

    Spans of one edit never overlap, so a clash is always between two edits.
    """
    reach: Replacement | None = None  # the span reaching furthest so far
    for current in replacements:
        if reach is not None and current.start < reach.end:
            first, second = sorted((reach, current), key=lambda r: r.edit_index)
            raise OverlappingEdits(
                edit_indexes=[first.edit_index, second.edit_index],
                lines=[first.line, second.line],
            )
        if reach is None or current.end > reach.end:
            reach = current


def _longest_line(old_str: str) -> str:
    """``old_str``'s longest line without surrounding whitespace.

    Levels 2 and 3 only ignore whitespace at line ends, so whatever they match contains this
    verbatim: one ``str.find`` rules them out for text that was never there.
    """
    return max((line.strip(_TRAILING_WS) for line in old_str.split("\n")), key=len)


@dataclass(frozen=True)
class _Span:
    """A match found by a level; ``indent`` is level 3's indentation change."""

    start: int
    end: int
    line: int
    indent: _Shift | None = None


@dataclass(frozen=True)
class _Found:
    """A level's outcome: the matches located (all, or the first few) and the total."""

    spans: list[_Span]
    total: int


_NOTHING = _Found([], 0)


def _exact(text: str, old_str: str, limit: int | None) -> _Found:
    """Level 1: ``str.count`` gives the total; only the first ``limit`` matches are located."""
    total = text.count(old_str)
    spans: list[_Span] = []
    line, previous, start = 1, 0, -len(old_str)
    for _ in range(total if limit is None else min(total, limit)):
        start = text.find(old_str, start + len(old_str))
        line += text.count("\n", previous, start)
        previous = start
        spans.append(_Span(start, start + len(old_str), line))
    return _Found(spans, total)


class _Document:
    """The text prepared for levels 2 and 3 and the no-match hint; each view is built once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_start = _LineStarts(text)

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached_property
    def normalized_lines(self) -> list[str]:
        """Every line without trailing spaces, tabs or carriage return."""
        if self.is_normalized:
            return self.lines
        return list(map(str.rstrip, self.lines, repeat(_TRAILING_WS)))

    @cached_property
    def normalized_text(self) -> str:
        return self.text if self.is_normalized else "\n".join(self.normalized_lines)

    @cached_property
    def is_normalized(self) -> bool:
        """Whether no line ends in whitespace: then level 2's views are the text's own (cheap)."""
        text = self.text
        return not (
            text.endswith((" ", "\t", "\r")) or any(end in text for end in (" \n", "\t\n", "\r\n"))
        )

    @cached_property
    def unindented_lines(self) -> list[str]:
        """The normalized lines without indentation: the contents level 3 compares."""
        return list(map(str.lstrip, self.normalized_lines, repeat(_INDENT_WS)))

    @cached_property
    def line_wrapped_unindented(self) -> str:
        """The unindented lines between newlines: a newline-wrapped needle matches whole lines."""
        return "\n".join(["", *self.unindented_lines, ""])

    @cached_property
    def stripped_lines(self) -> list[str]:
        """Every line without surrounding spaces, tabs or CR: what the no-match hint compares."""
        return list(map(str.strip, self.lines, repeat(_TRAILING_WS)))

    @cached_property
    def token_text(self) -> str:
        """Level 3's fallback view: its tokens between newlines (see ``_shift_tokens``)."""
        return _token_text(self.normalized_lines, self.unindented_lines)

    def line_content_end(self, index: int) -> int:
        """Offset of the end of line ``index``, past trailing whitespace but before a CR."""
        line = self.lines[index]
        return self.line_start(index) + len(line) - line.endswith("\r")


def _normalize(text: str) -> str:
    """Level 2's view of ``old_str``: trailing spaces/tabs/CR stripped from every line."""
    return "\n".join(line.rstrip(_TRAILING_WS) for line in text.split("\n"))


def _whitespace_normalized(document: _Document, old_str: str, limit: int | None) -> _Found:
    """Level 2: search the normalized ``old_str`` in the normalized text."""
    needle = _normalize(old_str)
    haystack = document.normalized_text
    if len(haystack) == len(document.text) and needle == old_str:
        return _NOTHING  # normalization removed nothing: this is the exact search that failed
    total = haystack.count(needle)
    spans: list[_Span] = []
    index, previous, start = 0, 0, -len(needle)
    for _ in range(total if limit is None else min(total, limit)):
        start = haystack.find(needle, start + len(needle))
        index += haystack.count("\n", previous, start)
        previous = start
        column = start - haystack.rfind("\n", 0, start) - 1
        spans.append(_map_normalized(document, index, column, needle, old_str))
    return _Found(spans, total)


def _map_normalized(
    document: _Document, index: int, column: int, needle: str, old_str: str
) -> _Span:
    """The original span of a normalized match starting at line ``index``, ``column``.

    Lines are the same in both texts and normalization only removes characters at line ends,
    so both ends keep their line and column. Then the end is widened so the replacement leaves
    no stray whitespace behind:

    - a match ending at the end of a (non-empty) line takes that line's trailing whitespace,
      but not the CR of a CRLF, so the line ending survives;
    - otherwise it takes as much of ``old_str``'s own stripped trailing whitespace as the text
      has there (``"foo\\n    "`` ending inside the next line's indentation takes it).

    A match starting at a line end (``old_str`` starts with a newline) likewise includes that
    line's trailing whitespace. Nothing outside the matched lines is touched.
    """
    start = document.line_start(index) + column
    end_index = index + needle.count("\n")
    end_column = (
        column + len(needle) if end_index == index else len(needle) - needle.rfind("\n") - 1
    )
    if end_column and end_column == len(document.normalized_lines[end_index]):
        end = document.line_content_end(end_index)
    else:
        end = document.line_start(end_index) + end_column
        end += _common_prefix_length(_trailing_whitespace(old_str), document.text, end)
    return _Span(start, end, index + 1)


def _trailing_whitespace(text: str) -> str:
    last_line = text[text.rfind("\n") + 1 :]
    return last_line[len(last_line.rstrip(_TRAILING_WS)) :]


def _common_prefix_length(prefix: str, text: str, offset: int) -> int:
    """How many leading characters of ``prefix`` ``text`` repeats from ``offset``."""
    length = 0
    for expected, actual in zip(prefix, text[offset : offset + len(prefix)], strict=False):
        if expected != actual:
            break
        length += 1
    return length


# --- level 3: indentation_relative --------------------------------------------------------------
#
# A block matches when its lines' contents (indentation stripped) equal old_str's and one uniform
# shift of indentation explains every non-blank line. Candidates come from one str.find of the
# unindented old_str among the unindented text lines; checking each costs O(lines of old_str). A
# periodic old_str (many identical lines) can produce a candidate on nearly every line, so after
# a work budget the search switches to a token scan that gives the same answer in linear time:
# one string of per-line tokens, searched in C (str.find, or the regex engine's KMP prefix scan).
# The scan never holds a Python object per token beyond the text's own line lists.

# Work allowed for direct checks, per line of text (plus old_str): beyond it, tokens are cheaper.
_DIRECT_WORK_FACTOR = 1
# A link token starts with a space, which no content token (an unindented line) can; the two
# indentations inside it are split by a character that is never indentation.
_LINK, _LINK_SPLIT = " ", "\x1e"


@dataclass(frozen=True)
class _Shift:
    """``old_str``'s indentation prefix ``removed`` is the text's prefix ``added``."""

    removed: str
    added: str

    @classmethod
    def between(cls, old_indent: str, text_indent: str) -> _Shift:
        """The smallest shift turning ``old_indent`` into ``text_indent``.

        Dropping the longest common suffix keeps the swapped prefixes as short as possible; any
        larger shift that fits a block is this one plus a shared suffix, so this one fits too.
        """
        shared = 0
        limit = min(len(old_indent), len(text_indent))
        while shared < limit and old_indent[-1 - shared] == text_indent[-1 - shared]:
            shared += 1
        return cls(old_indent[: len(old_indent) - shared], text_indent[: len(text_indent) - shared])

    def fits(self, old_indent: str, text_indent: str) -> bool:
        return (
            old_indent.startswith(self.removed)
            and text_indent.startswith(self.added)
            and old_indent[len(self.removed) :] == text_indent[len(self.added) :]
        )

    def apply(self, line: str) -> str:
        """Swap the prefix; a line that does not start with ``removed`` cannot shift: kept."""
        if not line.startswith(self.removed):
            return line
        return self.added + line[len(self.removed) :]


@dataclass(frozen=True)
class _Block:
    """``old_str`` as level 3 sees it: normalized lines split into indentation and content.

    A last line that is empty or only whitespace is taken as the newline ending the block.
    """

    indents: list[str]
    contents: list[str]
    ends_with_newline: bool

    @classmethod
    def parse(cls, old_str: str) -> _Block:
        lines = _normalize(old_str).split("\n")
        ends_with_newline = len(lines) > 1 and lines[-1] == ""
        if ends_with_newline:
            lines.pop()
        contents = [line.lstrip(_INDENT_WS) for line in lines]
        indents = [
            line[: len(line) - len(text)] for line, text in zip(lines, contents, strict=True)
        ]
        return cls(indents, contents, ends_with_newline)

    @cached_property
    def non_blank(self) -> list[int]:
        return [index for index, content in enumerate(self.contents) if content]

    @cached_property
    def token_pattern(self) -> re.Pattern[str] | str:
        """What ``_token_blocks`` searches: the block's tokens between newlines.

        Trailing blank lines follow the block's last content after the link to the next content
        line (outside the block), so they need a pattern; without them a plain string does.
        """
        lines = [
            indent + content for indent, content in zip(self.indents, self.contents, strict=True)
        ]
        tokens = _token_text(lines, self.contents)
        needle = tokens[: len(tokens) - self.trailing_blanks]  # one newline per trailing blank
        if not self.trailing_blanks:
            return needle
        link = f"(?:{re.escape(_LINK)}[^\n]*\n)?"
        return re.compile(re.escape(needle) + link + "\n" * self.trailing_blanks)

    @property
    def trailing_blanks(self) -> int:
        return len(self.contents) - 1 - self.non_blank[-1]


class _Blocks:
    """Collects level-3 matches: non-overlapping, left to right, the first few with spans."""

    def __init__(self, document: _Document, block: _Block, limit: int | None) -> None:
        self.document = document
        self.block = block
        self.limit = limit
        self.spans: list[_Span] = []
        self.total = 0
        self.next_free = 0  # first line a further match may start on

    def accept(self, index: int) -> bool:
        """Record the block starting at line ``index`` unless it overlaps or lacks its newline."""
        last = index + len(self.block.contents) - 1
        has_newline = last + 1 < len(self.document.lines)
        if index < self.next_free or (self.block.ends_with_newline and not has_newline):
            return False
        self.total += 1
        self.next_free = last + 1
        if self.limit is None or len(self.spans) < self.limit:
            self.spans.append(self._span(index, last))
        return True

    def _span(self, index: int, last: int) -> _Span:
        """Whole lines, to the end of the last line's content or past its newline."""
        document, block = self.document, self.block
        start = document.line_start(index)  # before the end: the line cursor only walks forward
        if block.ends_with_newline:
            end = document.line_start(last + 1)
        else:
            end = document.line_content_end(last)
        first = block.non_blank[0]
        text_line = document.normalized_lines[index + first]
        text_indent = text_line[: len(text_line) - len(block.contents[first])]
        return _Span(start, end, index + 1, _Shift.between(block.indents[first], text_indent))

    def found(self) -> _Found:
        return _Found(self.spans, self.total)


def _indentation_relative(document: _Document, old_str: str, limit: int | None) -> _Found:
    """Level 3: whole lines equal to ``old_str``'s up to one uniform shift of indentation."""
    block = _Block.parse(old_str)
    found = _direct_blocks(document, block, limit)
    if found is not None:
        return found
    pattern = _same_indent_pattern(block)
    if pattern is not None and pattern.search(document.text) is None:
        return _NOTHING  # cut short: no window of the text could take one shift (see below)
    return _token_blocks(document, block, limit)


def _same_indent_pattern(block: _Block) -> re.Pattern[str] | None:
    """A regex every level-3 match of ``block`` satisfies, when its non-blank lines share one
    indentation (the common case); None otherwise.

    One shift maps a shared indentation to one indentation in the text, so a match is a run of
    lines whose non-blank ones all start with the same indentation (a backreference) followed by
    the block's contents. The regex engine rules that out in C over a 10 MB text in a fraction
    of the time ``_token_blocks`` needs to build its tokens, so a periodic ``old_str`` that
    cannot match (lines alternating in indentation) fails fast. A hit proves nothing: the exact
    search still runs.
    """
    if len({block.indents[i] for i in block.non_blank}) != 1:
        return None
    parts: list[str] = []
    captured = False
    last = len(block.contents) - 1
    for index, content in enumerate(block.contents):
        end = "\n" if index < last or block.ends_with_newline else r"(?=\n|\Z)"
        if not content:
            parts.append(f"[{_TRAILING_WS}]*{end}")
            continue
        indent = "\\1" if captured else f"([{_INDENT_WS}]*)"
        captured = True
        parts.append(f"{indent}{re.escape(content)}[{_TRAILING_WS}]*{end}")
    return re.compile("^" + "".join(parts), re.MULTILINE)


def _direct_blocks(document: _Document, block: _Block, limit: int | None) -> _Found | None:
    """Find content candidates with ``str.find`` and check each one's indentation.

    Returns None when the work budget runs out, which only a periodic ``old_str`` causes: an
    aperiodic one has candidates at least half its length apart.
    """
    haystack = document.line_wrapped_unindented
    needle = "\n" + "\n".join(block.contents) + "\n"  # newlines on both sides: whole lines only
    budget = _DIRECT_WORK_FACTOR * (len(document.lines) + len(block.contents))
    if 2 * haystack.count(needle) * len(block.contents) > budget:
        return None  # non-overlapping occurrences alone spend half the budget: a periodic block
    blocks = _Blocks(document, block, limit)
    index = previous = 0
    start = haystack.find(needle)
    while start >= 0:
        budget -= len(block.contents)
        if budget < 0:
            return None
        index += haystack.count("\n", previous, start)
        previous = start
        fits = _fits_one_shift(block, document.normalized_lines, index)
        resume = start + len(needle) - 1 if fits and blocks.accept(index) else start + 1
        start = haystack.find(needle, resume)
    return blocks.found()


def _fits_one_shift(block: _Block, lines: list[str], index: int) -> bool:
    """Whether one shift, taken from the first non-blank line, fits every non-blank line."""
    shift: _Shift | None = None
    for offset in block.non_blank:
        line = lines[index + offset]
        text_indent = line[: len(line) - len(block.contents[offset])]
        if shift is None:
            shift = _Shift.between(block.indents[offset], text_indent)
        elif not shift.fits(block.indents[offset], text_indent):
            return False
    return True


def _token_blocks(document: _Document, block: _Block, limit: int | None) -> _Found:
    """The same matches as ``_direct_blocks`` in linear time, by searching line tokens.

    Equal token runs mean equal contents and equal "links" between consecutive non-blank
    lines, and equal links are exactly what one uniform shift needs (see ``_shift_tokens``).
    A hit's line is the number of non-link tokens before it, counted in C between hits.
    """
    haystack = document.token_text
    pattern = block.token_pattern
    blocks = _Blocks(document, block, limit)
    index, previous = 0, 0
    hit = _next_token_hit(pattern, haystack, 0)
    while hit is not None:
        start, end = hit
        index += haystack.count("\n", previous, start) - haystack.count(
            "\n" + _LINK, previous, start
        )
        previous = start
        # the newline ending a hit starts the next block's tokens
        hit = _next_token_hit(pattern, haystack, end - 1 if blocks.accept(index) else start + 1)
    return blocks.found()


def _next_token_hit(
    pattern: re.Pattern[str] | str, haystack: str, position: int
) -> tuple[int, int] | None:
    if isinstance(pattern, str):
        start = haystack.find(pattern, position)
        return None if start < 0 else (start, start + len(pattern))
    match = pattern.search(haystack, position)
    return None if match is None else match.span()


def _token_text(lines: list[str], contents: list[str]) -> str:
    """The tokens of ``lines`` (normalized) with ``contents`` (unindented), between newlines.

    A non-blank line is its content and a blank line ``""``. Between two non-blank lines sits a
    link token, before the blank lines between them: both indentations without their longest
    common prefix (see ``_link``). Two blocks with equal contents have equal links iff one
    uniform prefix shift maps one onto the other (the common prefix absorbs the shift). A
    block's first non-blank line has its link outside the block (placed before its leading
    blank lines), so a block's tokens are one contiguous run.

    This runs over every line of a 10 MB text, so it is built from C-level ``map``s and slice
    assignments, without a tuple per line: each distinct link string is made once and shared.
    """
    total = len(contents)
    nonblank: list[int] | None = None
    if "" in contents:
        nonblank = list(compress(range(total), contents))
        if not nonblank:
            return "\n" * (total + 1)
        lines, contents = list(compress(lines, contents)), list(compress(contents, contents))
    indents = list(map(str.removesuffix, lines, contents))
    tokens = [""] * (2 * len(contents) - 1)
    tokens[::2] = contents
    tokens[1::2] = map(getitem, map(_Links().__getitem__, indents), indents[1:])
    if nonblank is None:
        return "\n" + "\n".join(tokens) + "\n"
    for gap in compress(range(len(nonblank) - 1), map(sub, nonblank[1:], nonblank[:-1])):
        blanks = nonblank[gap + 1] - nonblank[gap] - 1
        if blanks:
            tokens[2 * gap + 1] += "\n" * blanks  # the blank tokens after the link
    leading, trailing = nonblank[0], total - 1 - nonblank[-1]
    return "\n" * (leading + 1) + "\n".join(tokens) + "\n" * (trailing + 1)


class _Links(dict[str, "_LinksFrom"]):
    """Link tokens by indentation, then next indentation: ``links[a][b]``, made on first use.

    Two dict lookups per line in C; a tuple key per line would feed the garbage collector.
    """

    def __missing__(self, previous: str) -> _LinksFrom:
        found = self[previous] = _LinksFrom(previous)
        return found


class _LinksFrom(dict[str, str]):
    def __init__(self, previous: str) -> None:
        super().__init__()
        self.previous = previous

    def __missing__(self, indent: str) -> str:
        link = self[indent] = _link(self.previous, indent)
        return link


def _link(previous: str, indent: str) -> str:
    shared = 0
    while shared < min(len(previous), len(indent)) and previous[shared] == indent[shared]:
        shared += 1
    return _LINK + previous[shared:] + _LINK_SPLIT + indent[shared:]


def _reindent(new_str: str, shift: _Shift) -> str:
    """``new_str`` with the block's shift applied to each line.

    Blank lines are kept verbatim (no trailing whitespace is invented), and a line that does
    not start with the removed prefix (indented less than ``old_str`` was) is left alone. When
    the agent stripped indentation (nothing removed) every non-blank line gets the prefix.
    """
    return "\n".join(shift.apply(line) if line.strip() else line for line in new_str.split("\n"))


def _no_match(document: _Document, old_str: str) -> NoMatch:
    """``NoMatch``, naming the text line closest to ``old_str``'s first non-blank line.

    "Close" is a rapidfuzz ``ratio`` of at least 80 between stripped lines, which tolerates a
    few changed characters but not a different line; very short lines would match anything.
    Only the first ``_CLOSEST_COMPARE_CHARS`` characters of each line are compared: the ratio
    costs length x length per pair, and two near-identical 1 MB lines would take minutes.
    """
    first = next((line.strip() for line in old_str.split("\n") if line.strip()), "")
    if len(first) < _CLOSEST_MIN_CHARS:
        return NoMatch()
    hit = process.extractOne(
        first[:_CLOSEST_COMPARE_CHARS],
        _line_prefixes(document.stripped_lines),
        scorer=fuzz.ratio,
        processor=None,
        score_cutoff=_CLOSEST_SCORE_CUTOFF,
    )
    if hit is None:
        return NoMatch()
    index = hit[2]
    line = document.lines[index].rstrip(_TRAILING_WS)
    if len(line) > _CLOSEST_MAX_CHARS:
        line = line[:_CLOSEST_MAX_CHARS] + ELLIPSIS
    return NoMatch(closest_line=index + 1, closest_text=line)


def _line_prefixes(lines: list[str]) -> list[str]:
    """``lines`` cut to ``_CLOSEST_COMPARE_CHARS``, copied only when some line is longer."""
    if max(map(len, lines)) <= _CLOSEST_COMPARE_CHARS:
        return lines
    return [line[:_CLOSEST_COMPARE_CHARS] for line in lines]


# --- unified diff for dry runs ------------------------------------------------------------------

# Above this many lines in a hunk's window, difflib's matching (quadratic at worst) is skipped:
# the window is shown as its common lines around one removed and one added run.
_DIFF_WINDOW_LINES = 2_000
_NO_NEWLINE = "\n\\ No newline at end of file\n"


def unified_diff(
    old: str,
    new: str,
    *,
    context: int = 3,
    max_chars: int = 20_000,
    spans: Sequence[tuple[int, int, str]] | None = None,
) -> tuple[str, bool]:
    """A unified diff from ``old`` to ``new`` and whether it was cut at ``max_chars``.

    ``spans`` are the ``(start, end, new_text)`` changes of ``old`` that make ``new`` (sorted,
    non-overlapping; ``EditPlan.spans``); without them the one region between the common
    prefix and suffix is used. difflib only sees each changed region's lines plus ``context``
    lines around it (regions closer than that share a hunk), and the hunk headers carry the
    lines' numbers in the whole texts. So a small change in a 100 000-line text costs a few
    C scans. An unchanged text gives ``("", False)``.
    """
    if spans is None:
        spans = _changed_region(old, new)
    writer = _DiffWriter(max_chars)
    for window in _diff_windows(old, spans, context):
        for line in _window_hunks(window, context):
            if not writer.add(line):
                return writer.text(), True
    return writer.text(), False


@dataclass(frozen=True)
class _DiffWindow:
    """Whole lines of both texts around a group of changes, and their first line numbers."""

    old_lines: list[str]
    new_lines: list[str]
    old_first: int  # 0-based line index in the old text
    new_first: int


class _DiffWriter:
    def __init__(self, max_chars: int) -> None:
        self.room = max_chars
        self.pieces: list[str] = []

    def add(self, piece: str) -> bool:
        """Append ``piece`` or as much as fits; False once something had to be cut."""
        if not self.pieces:
            piece = "--- before\n+++ after\n" + piece
        self.pieces.append(piece[: self.room])
        self.room -= len(piece)
        return self.room >= 0

    def text(self) -> str:
        return "".join(self.pieces)


def _changed_region(old: str, new: str) -> list[tuple[int, int, str]]:
    if old == new:
        return []
    prefix = _shared_prefix(old, new)
    suffix = _shared_prefix(old[prefix:][::-1], new[prefix:][::-1])
    return [(prefix, len(old) - suffix, new[prefix : len(new) - suffix])]


def _shared_prefix(a: str, b: str) -> int:
    """Length of the common prefix, compared in doubling chunks then halved (C-speed)."""
    limit, done, step = min(len(a), len(b)), 0, 256
    while step:
        stop = min(done + step, limit)
        if done < limit and a[done:stop] == b[done:stop]:
            done, step = stop, step * 2
        else:
            step //= 2
        if done == limit:
            break
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
        # taking it always only widens the window, and difflib trims surplus context
        last_line = lines_before(end)
    if group:
        yield _window(old, group, context, new_shift)


def _window(
    old: str, group: list[tuple[int, int, str]], context: int, new_shift: int
) -> _DiffWindow:
    low = _lines_back(old, group[0][0], context, 0)
    high = _lines_forward(old, group[-1][1], context, len(old))
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
    if len(a) + len(b) > _DIFF_WINDOW_LINES:
        groups = [_plain_group(a, b)]
    else:
        groups = list(
            difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context)
        )
    for group in groups:
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


def _plain_group(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """One hunk for a big window: the shared first and last lines around one replace."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return [
        ("equal", 0, head, 0, head),
        ("replace", head, len(a) - tail, head, len(b) - tail),
        ("equal", len(a) - tail, len(a), len(b) - tail, len(b)),
    ]


def _hunk_range(first: int, length: int) -> str:
    """``start,length`` as ``diff -u`` writes it (1-based; an empty range names the line before)."""
    if length == 1:
        return str(first + 1)
    return f"{first + 1 if length else first},{length}"


def _diff_line(mark: str, line: str) -> str:
    return mark + line if line.endswith("\n") else mark + line + _NO_NEWLINE
