"""str-replace (SPEC §4.3): one edit or many, matched against the original text, applied at once.

``plan_edits`` matches each edit by progressive matching (the levels live in ``replace_levels``)
and returns an ``EditPlan``: the spans to replace, what each edit matched, the new text, the
history's reverse ops and the dry run's diff.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from typing import NamedTuple

from rapidfuzz import fuzz, process

from content.text.diff import DIFF_MAX_CHARS, TextDiff, unified_diff
from content.text.replace_levels import (
    TRAILING_WS,
    Document,
    Found,
    Shift,
    exact_matches,
    indentation_relative_matches,
    reindent,
    whitespace_normalized_matches,
)
from content.text.search import ELLIPSIS, TextMatch, match_context

EXACT = "exact"
WHITESPACE_NORMALIZED = "whitespace_normalized"
INDENTATION_RELATIVE = "indentation_relative"

MAX_REPORTED_MATCHES = 20
MATCH_CONTEXT_LINES = 2
MATCH_CONTEXT_CHARS = 250

NO_MATCH_MESSAGE = "The specified text was not found in the content"
NO_MATCH_SUGGESTION = (
    "Verify the text exists and check for whitespace differences or recent edits; "
    "use search to get the exact current text."
)
MULTIPLE_MATCHES_SUGGESTION = "Include more surrounding context to ensure uniqueness"

_CLOSEST_MIN_CHARS = 4
_CLOSEST_SCORE_CUTOFF = 80
_CLOSEST_MAX_CHARS = 200
_CLOSEST_COMPARE_CHARS = 120

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


class Replacement(NamedTuple):
    """One matched span of the original text: replace ``text[start:end]`` by ``new_text``.

    ``line`` is the 1-based line where the span starts and ``edit_index`` the edit it belongs to.
    A named tuple: a replace_all makes up to ``TIDDLY_MAX_REPLACEMENTS`` of them, at C speed.
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


class TooManyReplacements(Exception):
    """The edits would make ``count`` replacements, more than the ``limit`` a request may make.

    Raised as soon as the count passes the limit, before the matches are located (SPEC §4.3
    Cost). ``count`` covers the edits up to ``edit_index`` (0-based, the one that went past the
    limit); ``at_least`` when counting stopped early (level 3 has no cheap full count).
    """

    def __init__(self, *, count: int, limit: int, edit_index: int, at_least: bool) -> None:
        counted = f"at least {count}" if at_least else str(count)
        super().__init__(f"the edits would make {counted} replacements; the limit is {limit}")
        self.count = count
        self.limit = limit
        self.edit_index = edit_index
        self.at_least = at_least


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

    @cached_property
    def new_length(self) -> int:
        """``len(new_content)``, computed without building it: a limit on the result is checked
        before 100 000 replacements by long texts are joined into something huge."""
        growth = sum(len(r.new_text) - (r.end - r.start) for r in self.replacements)
        return len(self.text) + growth

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

    def diff(self, *, context: int = 3, max_chars: int = DIFF_MAX_CHARS) -> TextDiff:
        """The unified diff of the change (see ``unified_diff``), from the known spans."""
        return unified_diff(
            self.text, self.new_content, context=context, max_chars=max_chars, spans=self.spans
        )


def plan_edits(
    text: str, edits: Sequence[Edit], *, max_replacements: int | None = None
) -> EditPlan:
    """Match every edit against the ORIGINAL ``text`` (SPEC §4.3) and plan applying them all.

    Each edit is matched by progressive matching:

    1. ``exact``: non-overlapping verbatim occurrences.
    2. ``whitespace_normalized``: both sides compared with trailing spaces/tabs and the ``"\\r"``
       of CRLF stripped from every line; the match is mapped back to the original text (see
       ``replace_levels``).
    3. ``indentation_relative``: whole lines equal up to one uniform shift of leading
       indentation (a prefix the agent stripped, added or swapped, e.g. tab for 4 spaces);
       ``new_str`` is re-indented by the same shift (see ``reindent``), per match.

    The first level that finds anything decides. There an edit needs exactly one match
    (else ``MultipleMatches``) unless ``replace_all``, which takes every non-overlapping match.
    No match at any level raises ``NoMatch``; both carry the failing ``edit_index``. A
    whitespace-only ``old_str`` only matches exactly. Spans of different edits must not overlap
    (``OverlappingEdits``). More than ``max_replacements`` matches in all raise
    ``TooManyReplacements`` as soon as they are counted. Raises ``ValueError`` for no edits, more
    than ``MAX_EDITS`` or an empty ``old_str``.

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
    document = Document(text)
    results: list[EditResult] = []
    replacements: list[Replacement] = []
    used = 0  # replacements planned by the edits before this one
    for index, edit in enumerate(edits):
        cap = None if max_replacements is None else max_replacements - used
        try:
            match_type, found = _match(document, edit.old_str, edit.replace_all, cap)
        except (NoMatch, MultipleMatches) as exc:
            exc.edit_index = index
            raise
        used += found.total
        if max_replacements is not None and used > max_replacements:
            raise TooManyReplacements(
                count=used, limit=max_replacements, edit_index=index, at_least=not found.complete
            )
        results.append(EditResult(match_type, found.spans[0].line, found.total))
        replacements.extend(_replacements(match_type, found, edit.new_str, index))
    replacements.sort(key=attrgetter("start", "end"))
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


def _match(document: Document, old_str: str, every: bool, cap: int | None) -> tuple[str, Found]:
    """The first level finding ``old_str`` and its matches: all when ``every``, else exactly one.

    Without ``every`` only the first ``MAX_REPORTED_MATCHES`` spans are located (the rest are
    counted) and several matches raise ``MultipleMatches``. With ``every``, more than ``cap``
    matches are only counted (the caller refuses them): levels 1 and 2 count in C before
    locating anything, level 3 stops its scan past ``cap``.
    """
    limit = None if every else MAX_REPORTED_MATCHES
    cap = cap if every else None
    text = document.text
    match_type, found = EXACT, exact_matches(text, old_str, limit, cap=cap)
    if not found.total and not old_str.strip():
        raise NoMatch()
    if not found.total and _longest_line(old_str) in text:
        # else neither loose level can match: skip their setup
        match_type, found = (
            WHITESPACE_NORMALIZED,
            whitespace_normalized_matches(document, old_str, limit, cap=cap),
        )
        if not found.total:
            match_type, found = (
                INDENTATION_RELATIVE,
                indentation_relative_matches(document, old_str, limit, cap=cap),
            )
    if not found.total:
        raise _no_match(document, old_str)
    if found.total > 1 and not every:
        raise _multiple_matches(text, match_type, found)
    return match_type, found


def _multiple_matches(text: str, match_type: str, found: Found) -> MultipleMatches:
    matches = [
        TextMatch(
            span.line,
            match_context(text, span.start, span.end, MATCH_CONTEXT_LINES, MATCH_CONTEXT_CHARS),
        )
        for span in found.spans
    ]
    return MultipleMatches(match_type=match_type, matches=matches, total=found.total)


def _replacements(match_type: str, found: Found, new_str: str, index: int) -> list[Replacement]:
    """One ``Replacement`` per span; level 3 re-indents ``new_str`` once per distinct shift."""
    reindented: dict[Shift, str] = {}
    replacements = []
    for span in found.spans:
        new_text = new_str
        if span.indent is not None:
            if span.indent not in reindented:
                reindented[span.indent] = reindent(new_str, span.indent)
            new_text = reindented[span.indent]
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
    return max((line.strip(TRAILING_WS) for line in old_str.split("\n")), key=len)


def _no_match(document: Document, old_str: str) -> NoMatch:
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
    line = document.lines[index].rstrip(TRAILING_WS)
    if len(line) > _CLOSEST_MAX_CHARS:
        line = line[:_CLOSEST_MAX_CHARS] + ELLIPSIS
    return NoMatch(closest_line=index + 1, closest_text=line)


def _line_prefixes(lines: list[str]) -> list[str]:
    """``lines`` cut to ``_CLOSEST_COMPARE_CHARS``, copied only when some line is longer."""
    if max(map(len, lines)) <= _CLOSEST_COMPARE_CHARS:
        return lines
    return [line[:_CLOSEST_COMPARE_CHARS] for line in lines]
