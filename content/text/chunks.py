"""Cutting an item into the pieces that are embedded for finding by meaning (SPEC §16).

An item becomes one *header* chunk (title, description, tags, url or name: what the item is
about) and its content cut into chunks of about ``MIN_CHARS``..``MAX_CHARS`` characters at
paragraph or heading boundaries. Each content chunk knows its line range (1-based, inclusive,
lines split on ``"\\n"`` only, as in ``lines``) so a search hit feeds a partial read directly.

The content chunks are a partition of the content's lines (consecutive, non-overlapping, in
order); only chunks that are nothing but whitespace are dropped. One pass over the lines, so a
10 MB note is cut in well under a second.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MIN_CHARS = 1_000
MAX_CHARS = 2_000
# The text embedded for a chunk is cut here: a static model averages token vectors, so more text
# only dilutes; a single line longer than this still is one chunk (a line is never split).
EMBED_CHARS = 4_000


@dataclass(frozen=True)
class Chunk:
    """One piece: ``field`` is ``"header"`` or ``"content"``; lines are null for the header."""

    field: str
    text: str
    start_line: int | None = None
    end_line: int | None = None
    start_char: int = 0  # offset of the chunk's text in the content (0 for the header)


def header_text(
    *,
    title: str | None,
    description: str | None,
    tags: Iterable[str] = (),
    extra: Iterable[str | None] = (),
) -> str:
    """Title, description, tags and the type's extra fields (url, name), one per line."""
    parts = [title or "", description or "", " ".join(tags), *(e or "" for e in extra)]
    return "\n".join(p.strip() for p in parts if p and p.strip())


def _is_heading(line: str) -> bool:
    return line.startswith("#")


def content_chunks(
    content: str | None, *, min_chars: int = MIN_CHARS, max_chars: int = MAX_CHARS
) -> Iterator[Chunk]:
    """The content cut at boundaries: a chunk ends before a heading or after a blank line once it
    holds ``min_chars``, and before any line that would take it past ``max_chars``."""
    if not content:
        return
    lines = content.split("\n")  # C speed; the list is what a chunker needs anyway
    start = 0  # index of the current chunk's first line
    offset = 0  # character offset of that line
    size = 0  # characters in the current chunk (newlines included)
    prev_blank = False
    for i, line in enumerate(lines):
        n = len(line) + 1
        if size and (
            (size >= min_chars and (prev_blank or _is_heading(line))) or size + n > max_chars
        ):
            chunk = _make(lines, start, i, offset)
            if chunk is not None:
                yield chunk
            start, offset, size = i, offset + size, 0
        size += n
        prev_blank = not line.strip()
    chunk = _make(lines, start, len(lines), offset)
    if chunk is not None:
        yield chunk


def _make(lines: list[str], start: int, stop: int, offset: int) -> Chunk | None:
    text = "\n".join(lines[start:stop])
    if not text.strip():
        return None
    return Chunk("content", text, start + 1, stop, offset)


def item_chunks(
    *,
    title: str | None,
    description: str | None,
    tags: Iterable[str] = (),
    extra: Iterable[str | None] = (),
    content: str | None,
) -> list[Chunk]:
    """Every chunk of one item: the header (when it has any text) then the content chunks."""
    header = header_text(title=title, description=description, tags=tags, extra=extra)
    chunks = [Chunk("header", header)] if header else []
    chunks.extend(content_chunks(content))
    return chunks


def embed_text(chunk: Chunk) -> str:
    return chunk.text[:EMBED_CHARS]
