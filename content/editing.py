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

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

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


@dataclass(frozen=True)
class Replacement:
    """The unique match of ``old_str``: replace ``text[start:end]`` by ``new_text``."""

    match_type: str
    start: int
    end: int
    line: int
    new_text: str

    def apply(self, text: str) -> str:
        """``text`` with the matched span replaced."""
        return text[: self.start] + self.new_text + text[self.end :]


class NoMatch(Exception):
    """No level found ``old_str``; ``suggestion`` names the closest line when one is close."""

    def __init__(self, *, closest_line: int | None = None, closest_text: str | None = None) -> None:
        super().__init__(NO_MATCH_MESSAGE)
        self.closest_line = closest_line
        self.closest_text = closest_text
        self.suggestion = NO_MATCH_SUGGESTION
        if closest_line is not None:
            self.suggestion += f' Closest line (line {closest_line}): "{closest_text}"'


class MultipleMatches(Exception):
    """``old_str`` matched ``total`` places at the level ``match_type``.

    ``matches`` holds the first ``MAX_REPORTED_MATCHES`` with 2 lines of context each.
    """

    suggestion = MULTIPLE_MATCHES_SUGGESTION

    def __init__(self, *, match_type: str, matches: list[TextMatch], total: int) -> None:
        super().__init__(f"old_str matches {total} places ({match_type}); it must match one")
        self.match_type = match_type
        self.matches = matches
        self.total = total


@dataclass(frozen=True)
class _Span:
    """A match found by a level; ``indent`` is level 3's indentation change."""

    start: int
    end: int
    line: int
    indent: _Shift | None = None


@dataclass(frozen=True)
class _Found:
    """A level's outcome: the first matches (at most the reported maximum) and the total."""

    spans: list[_Span]
    total: int


_NOTHING = _Found([], 0)


def find_replacement(text: str, old_str: str, new_str: str) -> Replacement:
    """Locate the unique match of ``old_str`` in ``text`` by progressive matching (SPEC §4.3).

    Levels, stopping at the first one that finds anything:

    1. ``exact``: non-overlapping verbatim occurrences.
    2. ``whitespace_normalized``: both sides compared with trailing spaces/tabs and the ``"\\r"``
       of CRLF stripped from every line; the match is mapped back to the original text (see
       ``_map_normalized``).
    3. ``indentation_relative``: whole lines equal up to one uniform shift of leading
       indentation (a prefix the agent stripped, added or swapped, e.g. tab for 4 spaces);
       ``new_str`` is re-indented by the same shift (see ``_reindent``).

    One match gives a ``Replacement``; several raise ``MultipleMatches``; none at all raise
    ``NoMatch``. ``new_str`` is otherwise inserted verbatim. A whitespace-only ``old_str`` only
    matches exactly. Raises ``ValueError`` for an empty ``old_str``.
    """
    if not old_str:
        raise ValueError("old_str must not be empty")
    found = _exact(text, old_str)
    if found.total:
        return _conclude(text, EXACT, found, new_str)
    if not old_str.strip():
        raise NoMatch()
    document = _Document(text)
    if _longest_line(old_str) in text:  # else neither loose level can match: skip their setup
        found = _whitespace_normalized(document, old_str)
        if found.total:
            return _conclude(text, WHITESPACE_NORMALIZED, found, new_str)
        found = _indentation_relative(document, old_str)
        if found.total:
            return _conclude(text, INDENTATION_RELATIVE, found, new_str)
    raise _no_match(document, old_str)


def _longest_line(old_str: str) -> str:
    """``old_str``'s longest line without surrounding whitespace.

    Levels 2 and 3 only ignore whitespace at line ends, so whatever they match contains this
    verbatim: one ``str.find`` rules them out for text that was never there.
    """
    return max((line.strip(_TRAILING_WS) for line in old_str.split("\n")), key=len)


def _conclude(text: str, match_type: str, found: _Found, new_str: str) -> Replacement:
    """The replacement for a level's single match, or ``MultipleMatches``."""
    if found.total > 1:
        matches = [
            TextMatch(
                span.line,
                _context(text, span.start, span.end, MATCH_CONTEXT_LINES, MATCH_CONTEXT_CHARS),
            )
            for span in found.spans
        ]
        raise MultipleMatches(match_type=match_type, matches=matches, total=found.total)
    span = found.spans[0]
    new_text = new_str if span.indent is None else _reindent(new_str, span.indent)
    return Replacement(match_type, span.start, span.end, span.line, new_text)


def _exact(text: str, old_str: str) -> _Found:
    """Level 1: ``str.count`` gives the total; only the reported matches are located."""
    total = text.count(old_str)
    spans: list[_Span] = []
    line, previous, start = 1, 0, -len(old_str)
    for _ in range(min(total, MAX_REPORTED_MATCHES)):
        start = text.find(old_str, start + len(old_str))
        line += text.count("\n", previous, start)
        previous = start
        spans.append(_Span(start, start + len(old_str), line))
    return _Found(spans, total)


class _Document:
    """The text prepared for levels 2 and 3 and the no-match hint; each view is built once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.line_start = _LineStarts(text)

    @cached_property
    def normalized_lines(self) -> list[str]:
        """Every line without trailing spaces, tabs or carriage return."""
        return [line.rstrip(_TRAILING_WS) for line in self.lines]

    @cached_property
    def normalized_text(self) -> str:
        return "\n".join(self.normalized_lines)

    @cached_property
    def unindented_lines(self) -> list[str]:
        """The normalized lines without indentation: the contents level 3 compares."""
        return [line.lstrip(_INDENT_WS) for line in self.normalized_lines]

    @cached_property
    def line_wrapped_unindented(self) -> str:
        """The unindented lines between newlines: a newline-wrapped needle matches whole lines."""
        return "\n".join(["", *self.unindented_lines, ""])

    @cached_property
    def stripped_lines(self) -> list[str]:
        """Every line without surrounding spaces, tabs or CR: what the no-match hint compares."""
        return [line.strip(_TRAILING_WS) for line in self.lines]

    @cached_property
    def shift_tokens(self) -> tuple[list[str], list[int]]:
        """Level 3's fallback view: one token per line plus links (see ``_shift_tokens``)."""
        pairs = (
            (line[: len(line) - len(content)], content)
            for line, content in zip(self.normalized_lines, self.unindented_lines, strict=True)
        )
        return _shift_tokens(pairs)

    def line_content_end(self, index: int) -> int:
        """Offset of the end of line ``index``, past trailing whitespace but before a CR."""
        line = self.lines[index]
        return self.line_start(index) + len(line) - line.endswith("\r")


def _normalize(text: str) -> str:
    """Level 2's view of ``old_str``: trailing spaces/tabs/CR stripped from every line."""
    return "\n".join(line.rstrip(_TRAILING_WS) for line in text.split("\n"))


def _whitespace_normalized(document: _Document, old_str: str) -> _Found:
    """Level 2: search the normalized ``old_str`` in the normalized text."""
    needle = _normalize(old_str)
    haystack = document.normalized_text
    if len(haystack) == len(document.text) and needle == old_str:
        return _NOTHING  # normalization removed nothing: this is the exact search that failed
    total = haystack.count(needle)
    spans: list[_Span] = []
    index, previous, start = 0, 0, -len(needle)
    for _ in range(min(total, MAX_REPORTED_MATCHES)):
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
# a work budget the search switches to a linear token scan (KMP over per-line tokens) that gives
# the same answer.

# Work allowed for direct checks, per line of text (plus old_str): beyond it, tokens are cheaper.
_DIRECT_WORK_FACTOR = 4
_LINK, _CONTENT = "\x1e", "\x1f"


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
    def tokens(self) -> list[str]:
        """The token pattern (see ``_shift_tokens``) without the trailing blank lines."""
        tokens = _shift_tokens(zip(self.indents, self.contents, strict=True))[0]
        return tokens[: len(tokens) - self.trailing_blanks]

    @property
    def trailing_blanks(self) -> int:
        return len(self.contents) - 1 - self.non_blank[-1]


class _Blocks:
    """Collects level-3 matches: non-overlapping, left to right, the first few with spans."""

    def __init__(self, document: _Document, block: _Block) -> None:
        self.document = document
        self.block = block
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
        if len(self.spans) < MAX_REPORTED_MATCHES:
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


def _indentation_relative(document: _Document, old_str: str) -> _Found:
    """Level 3: whole lines equal to ``old_str``'s up to one uniform shift of indentation."""
    block = _Block.parse(old_str)
    found = _direct_blocks(document, block)
    return found if found is not None else _token_blocks(document, block)


def _direct_blocks(document: _Document, block: _Block) -> _Found | None:
    """Find content candidates with ``str.find`` and check each one's indentation.

    Returns None when the work budget runs out, which only a periodic ``old_str`` causes: an
    aperiodic one has candidates at least half its length apart.
    """
    haystack = document.line_wrapped_unindented
    needle = "\n" + "\n".join(block.contents) + "\n"  # newlines on both sides: whole lines only
    budget = _DIRECT_WORK_FACTOR * (len(document.lines) + len(block.contents))
    blocks = _Blocks(document, block)
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


def _token_blocks(document: _Document, block: _Block) -> _Found:
    """The same matches as ``_direct_blocks`` in linear time, by KMP over line tokens.

    Equal token sequences mean equal contents and equal "links" between consecutive non-blank
    lines, and equal links are exactly what one uniform shift needs (see ``_shift_tokens``).
    Trailing blank lines of ``old_str`` are checked after the scan, walking only blank lines.
    """
    tokens, origins = document.shift_tokens
    blocks = _Blocks(document, block)
    contents = document.unindented_lines
    for position in _kmp_occurrences(block.tokens, tokens):
        last_content = origins[position + len(block.tokens) - 1]
        trailing = range(last_content + 1, last_content + 1 + block.trailing_blanks)
        if trailing.stop <= len(contents) and not any(contents[line] for line in trailing):
            blocks.accept(origins[position])
    return blocks.found()


def _shift_tokens(pairs: Iterable[tuple[str, str]]) -> tuple[list[str], list[int]]:
    """Tokens for (indentation, content) lines and the line each token stands for (-1: none).

    A non-blank line is ``_CONTENT + content`` and a blank line ``""``. Between two non-blank
    lines sits a link token, before the blank lines between them: both indentations without
    their longest common prefix. Two blocks with equal contents have equal links iff one
    uniform prefix shift maps one onto the other (the common prefix absorbs the shift). A
    block's first non-blank line has its link outside the block (placed before its leading
    blank lines), so a block's tokens are one contiguous run.
    """
    tokens: list[str] = []
    origins: list[int] = []
    previous: str | None = None
    blanks: list[int] = []
    for index, (indent, content) in enumerate(pairs):
        if not content:
            blanks.append(index)
            continue
        if previous is not None:
            tokens.append(_link(previous, indent))
            origins.append(-1)
        tokens.extend("" for _ in blanks)
        origins.extend(blanks)
        tokens.append(_CONTENT + content)
        origins.append(index)
        previous, blanks = indent, []
    tokens.extend("" for _ in blanks)
    origins.extend(blanks)
    return tokens, origins


def _link(previous: str, indent: str) -> str:
    if previous == indent:
        return _LINK + _LINK
    shared = 0
    while shared < min(len(previous), len(indent)) and previous[shared] == indent[shared]:
        shared += 1
    return _LINK + previous[shared:] + _LINK + indent[shared:]


def _kmp_occurrences(pattern: list[str], tokens: list[str]) -> Iterator[int]:
    """Start of every (overlapping) occurrence of ``pattern`` in ``tokens``, in linear time."""
    failure = [0] * len(pattern)
    matched = 0
    for position in range(1, len(pattern)):
        while matched and pattern[position] != pattern[matched]:
            matched = failure[matched - 1]
        if pattern[position] == pattern[matched]:
            matched += 1
        failure[position] = matched
    matched = 0
    for position, token in enumerate(tokens):
        while matched and token != pattern[matched]:
            matched = failure[matched - 1]
        if token == pattern[matched]:
            matched += 1
        if matched == len(pattern):
            yield position - matched + 1
            matched = failure[matched - 1]


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
