"""Within-item search (SPEC §4.2): literal occurrences of a query with the lines around them.

A match reported with context never re-scans the document: contexts are cut to a bounded number
of characters on either side (one line can be the whole document), and counting the remaining
occurrences of a very common query builds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from content.text.lines import lines_back, lines_forward

# The most characters a context shows on either side of its match (see ``match_context``): enough
# for ten ordinary lines in a search; 20 multiple_matches contexts stay well under 20 KB.
SEARCH_CONTEXT_CHARS = 2_000
ELLIPSIS = "…"

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
            TextMatch(line, match_context(text, start, end, context_lines, SEARCH_CONTEXT_CHARS))
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


def match_context(text: str, start: int, end: int, lines: int, side: int) -> str:
    """``lines`` lines before the line holding ``start`` through ``lines`` after the one at ``end``.

    The line at ``end`` is the match's last line: a match ending in a newline ends on the next
    line (``line + newlines in the match``). Walks with rfind/find; never splits the text.

    At most ``side`` characters are taken on either side of the match, and a match longer than
    ``side`` keeps only its two ends: one line can be the whole document (minified JSON, base64),
    and a context must neither carry it nor scan it once per match. Whatever is cut is marked with
    ``…``.
    """
    floor, ceiling = max(0, start - side), min(len(text), end + side)
    begin = lines_back(text, start, lines, floor)
    stop = lines_forward(text, end, lines, ceiling)
    head = ELLIPSIS if begin == floor > 0 and text[floor - 1] != "\n" else ""
    tail = ELLIPSIS if stop == ceiling < len(text) and text[ceiling] != "\n" else ""
    if end - start > side:
        half = side // 2
        middle = text[start : start + half] + ELLIPSIS + text[end - half : end]
    else:
        middle = text[start:end]
    return head + text[begin:start] + middle + text[end:stop] + tail
