"""The three matching levels of str-replace: exact, whitespace_normalized, indentation_relative.

Each level returns the matches it located (all, or the first ``limit``) and their total. Every
level is linear in the text: exact is ``str.count``/``find``; the looser levels search line views
of the text (``Document``) built once per request, in C.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import compress, repeat
from operator import getitem, sub
from typing import NamedTuple

from content.text.lines import LineStarts

# What level 2 strips from the end of every line; "\r" makes CRLF compare equal to LF.
TRAILING_WS = " \t\r"
_INDENT_WS = " \t"
# Trailing whitespace of a line; the lookbehind starts a match only at the start of a run, so a
# long run of spaces inside a line is tried once, not once per space.
_LINE_END_WS = re.compile(r"(?<![ \t\r])[ \t\r]+(?=\n|\Z)")
_NORMALIZE_CHUNK = 1 << 16


class _Span(NamedTuple):
    """A match found by a level; ``indent`` is level 3's indentation change.

    A named tuple: up to 100 000 are made per request, at C speed.
    """

    start: int
    end: int
    line: int
    indent: Shift | None = None


@dataclass(frozen=True)
class Found:
    """A level's outcome: the matches located (all, or the first few) and the total."""

    spans: list[_Span]
    total: int
    complete: bool = True  # False: counting stopped past the cap, ``total`` is a lower bound


_NOTHING = Found([], 0)


def _located(total: int, limit: int | None, cap: int | None) -> int:
    """How many of ``total`` matches a level locates: up to ``limit``, none past ``cap``.

    More than ``cap`` matches means the request is refused (too many replacements), so the
    counting, done in C, is all the work such a request costs.
    """
    if cap is not None and total > cap:
        return 0
    return total if limit is None else min(total, limit)


def exact_matches(text: str, old_str: str, limit: int | None, *, cap: int | None = None) -> Found:
    """Level 1: ``str.count`` gives the total; only the first ``limit`` matches are located."""
    total = text.count(old_str)
    width = len(old_str)
    found = _walk(text, old_str, _located(total, limit, cap))
    return Found([_Span(start, start + width, index + 1) for start, index in found], total)


def _walk(haystack: str, needle: str, count: int) -> Iterator[tuple[int, int]]:
    """The first ``count`` (of at least that many) matches of ``needle``: each one's start and
    0-based line index, newlines counted only between one match and the next."""
    index, previous, start = 0, 0, -len(needle)
    for _ in range(count):
        start = haystack.find(needle, start + len(needle))
        index += haystack.count("\n", previous, start)
        previous = start
        yield start, index


class Document:
    """The text prepared for levels 2 and 3 and the no-match hint; each view is built once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_start = LineStarts(text)

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached_property
    def normalized_lines(self) -> list[str]:
        """Every line without trailing spaces, tabs or carriage return."""
        if self.is_normalized:
            return self.lines
        return list(map(str.rstrip, self.lines, repeat(TRAILING_WS)))

    @cached_property
    def normalized_text(self) -> str:
        """The text without trailing whitespace on any line: level 2's haystack.

        Substituted in C a chunk of lines at a time: no list of all lines, and the substitution's
        own list of pieces stays small (a 10 MB text of short lines would make millions of line
        objects; level 2 needs none).
        """
        if self.is_normalized:
            return self.text
        text, chunks, start = self.text, [], 0
        while start < len(text):
            stop = text.find("\n", start + _NORMALIZE_CHUNK)  # chunks end at a line end
            stop = len(text) if stop < 0 else stop
            chunks.append(_LINE_END_WS.sub("", text[start:stop]))
            start = stop
        return "".join(chunks)

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
        return list(map(str.strip, self.lines, repeat(TRAILING_WS)))

    @cached_property
    def token_text(self) -> str:
        """Level 3's fallback view: its tokens between newlines (see ``_token_text``)."""
        return _token_text(self.normalized_lines, self.unindented_lines)

    def line_content_end(self, index: int) -> int:
        """Offset of the end of line ``index``, past trailing whitespace but before a CR."""
        start = self.line_start(index)
        stop = self.text.find("\n", start)
        stop = len(self.text) if stop < 0 else stop
        return stop - (stop > start and self.text[stop - 1] == "\r")


def _normalize(text: str) -> str:
    """Level 2's view of ``old_str``: trailing spaces/tabs/CR stripped from every line."""
    return "\n".join(line.rstrip(TRAILING_WS) for line in text.split("\n"))


def whitespace_normalized_matches(
    document: Document, old_str: str, limit: int | None, *, cap: int | None = None
) -> Found:
    """Level 2: search the normalized ``old_str`` in the normalized text (``limit``/``cap`` as
    for level 1)."""
    needle = _normalize(old_str)
    haystack = document.normalized_text
    if len(haystack) == len(document.text) and needle == old_str:
        return _NOTHING  # normalization removed nothing: this is the exact search that failed
    total = haystack.count(needle)
    spans: list[_Span] = []
    for start, index in _walk(haystack, needle, _located(total, limit, cap)):
        column = start - haystack.rfind("\n", 0, start) - 1
        stop = start + len(needle)
        at_line_end = stop == len(haystack) or haystack[stop] == "\n"
        spans.append(_map_normalized(document, index, column, needle, old_str, at_line_end))
    return Found(spans, total)


def _map_normalized(
    document: Document, index: int, column: int, needle: str, old_str: str, at_line_end: bool
) -> _Span:
    """The original span of a normalized match starting at line ``index``, ``column``;
    ``at_line_end`` tells whether it ends at the end of a normalized line.

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
    if end_column and at_line_end:
        end = document.line_content_end(end_index)
    else:
        end = document.line_start(end_index) + end_column
        end += _common_prefix_length(_trailing_whitespace(old_str), document.text, end)
    return _Span(start, end, index + 1)


def _trailing_whitespace(text: str) -> str:
    last_line = text[text.rfind("\n") + 1 :]
    return last_line[len(last_line.rstrip(TRAILING_WS)) :]


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


class Shift(NamedTuple):
    """``old_str``'s indentation prefix ``removed`` is the text's prefix ``added``.

    A named tuple (hashed and compared in C): matches are grouped by their shift.
    """

    removed: str
    added: str

    @staticmethod
    def between(old_indent: str, text_indent: str) -> Shift:
        """The smallest shift turning ``old_indent`` into ``text_indent``.

        Dropping the longest common suffix keeps the swapped prefixes as short as possible; any
        larger shift that fits a block is this one plus a shared suffix, so this one fits too.
        """
        return _shift_between(old_indent, text_indent)

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
    """Collects level-3 matches: non-overlapping, left to right, the first few with spans.

    Past ``cap`` matches it is ``full``: the scan stops (level 3 has no C count to ask first).
    Spans are made once the scan is over, so a refused request makes none.
    """

    def __init__(
        self, document: Document, block: _Block, limit: int | None, cap: int | None
    ) -> None:
        self.document = document
        self.block = block
        self.limit = limit
        self.cap = cap
        self.starts: list[int] = []  # first lines of the matches that get spans
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
        if self.limit is None or len(self.starts) < self.limit:
            self.starts.append(index)
        return True

    def _span(self, index: int) -> _Span:
        """Whole lines, to the end of the last line's content or past its newline."""
        document, block = self.document, self.block
        last = index + len(block.contents) - 1
        start = document.line_start(index)  # before the end: the line cursor only walks forward
        if block.ends_with_newline:
            end = document.line_start(last + 1)
        else:
            end = document.line_content_end(last)
        first = block.non_blank[0]
        text_line = document.normalized_lines[index + first]
        text_indent = text_line[: len(text_line) - len(block.contents[first])]
        return _Span(start, end, index + 1, Shift.between(block.indents[first], text_indent))

    @property
    def full(self) -> bool:
        return self.cap is not None and self.total > self.cap

    def found(self) -> Found:
        if self.full:
            return Found([], self.total, complete=False)
        return Found([self._span(index) for index in self.starts], self.total)


def indentation_relative_matches(
    document: Document, old_str: str, limit: int | None, *, cap: int | None = None
) -> Found:
    """Level 3: whole lines equal to ``old_str``'s up to one uniform shift of indentation.

    ``limit`` as for level 1; past ``cap`` matches the scan stops and the ``Found`` is
    incomplete (the request is refused).
    """
    block = _Block.parse(old_str)
    found = _direct_blocks(document, block, limit, cap)
    if found is not None:
        return found
    pattern = _same_indent_pattern(block)
    if pattern is not None and pattern.search(document.text) is None:
        return _NOTHING  # cut short: no window of the text could take one shift (see below)
    return _token_blocks(document, block, limit, cap)


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
            parts.append(f"[{TRAILING_WS}]*{end}")
            continue
        indent = "\\1" if captured else f"([{_INDENT_WS}]*)"
        captured = True
        parts.append(f"{indent}{re.escape(content)}[{TRAILING_WS}]*{end}")
    return re.compile("^" + "".join(parts), re.MULTILINE)


def _direct_blocks(
    document: Document, block: _Block, limit: int | None, cap: int | None = None
) -> Found | None:
    """Find content candidates with ``str.find`` and check each one's indentation.

    Returns None when the work budget runs out, which only a periodic ``old_str`` causes: an
    aperiodic one has candidates at least half its length apart.
    """
    haystack = document.line_wrapped_unindented
    needle = "\n" + "\n".join(block.contents) + "\n"  # newlines on both sides: whole lines only
    budget = _DIRECT_WORK_FACTOR * (len(document.lines) + len(block.contents))
    if 2 * haystack.count(needle) * len(block.contents) > budget:
        return None  # non-overlapping occurrences alone spend half the budget: a periodic block
    blocks = _Blocks(document, block, limit, cap)
    index = previous = 0
    start = haystack.find(needle)
    while start >= 0 and not blocks.full:
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
    shift: Shift | None = None
    for offset in block.non_blank:
        line = lines[index + offset]
        text_indent = line[: len(line) - len(block.contents[offset])]
        if shift is None:
            shift = Shift.between(block.indents[offset], text_indent)
        elif not shift.fits(block.indents[offset], text_indent):
            return False
    return True


def _token_blocks(
    document: Document, block: _Block, limit: int | None, cap: int | None = None
) -> Found:
    """The same matches as ``_direct_blocks`` in linear time, by searching line tokens.

    Equal token runs mean equal contents and equal "links" between consecutive non-blank
    lines, and equal links are exactly what one uniform shift needs (see ``_token_text``).
    A hit's line is the number of non-link tokens before it, counted in C between hits.
    """
    haystack = document.token_text
    pattern = block.token_pattern
    blocks = _Blocks(document, block, limit, cap)
    index, previous = 0, 0
    hit = _next_token_hit(pattern, haystack, 0)
    while hit is not None and not blocks.full:
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


@lru_cache(maxsize=1024)  # a text has few distinct indentations; each match asks twice
def _shift_between(old_indent: str, text_indent: str) -> Shift:
    shared = 0
    limit = min(len(old_indent), len(text_indent))
    while shared < limit and old_indent[-1 - shared] == text_indent[-1 - shared]:
        shared += 1
    return Shift(old_indent[: len(old_indent) - shared], text_indent[: len(text_indent) - shared])


def reindent(new_str: str, shift: Shift) -> str:
    """``new_str`` with the block's shift applied to each line.

    Blank lines are kept verbatim (no trailing whitespace is invented), and a line that does
    not start with the removed prefix (indented less than ``old_str`` was) is left alone. When
    the agent stripped indentation (nothing removed) every non-blank line gets the prefix.
    """
    return "\n".join(shift.apply(line) if line.strip() else line for line in new_str.split("\n"))
