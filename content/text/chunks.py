"""Cutting an item into the pieces that are embedded for finding by meaning (SPEC §16).

An item becomes one *header* chunk (title, description, tags, url or name: what the item is
about) and its content cut into chunks of about ``MIN_CHARS``..``MAX_CHARS`` characters at
paragraph or heading boundaries. Each content chunk knows its line range (1-based, inclusive,
lines split on ``"\\n"`` only, as in ``lines``) so a search hit feeds a partial read directly.

The content chunks are a partition of the content's lines (consecutive, non-overlapping, in
order); only chunks that are nothing but whitespace are dropped. One pass over the lines, so a
10 MB note is cut in well under a second.

Boundaries are content-defined, so an edit disturbs only the chunks near it: a cut depends only on
the chunk's first line and the lines that follow it. Content without paragraphs (a log, a list of
60-character lines) would otherwise be cut only at ``MAX_CHARS``, and one inserted character would
move every later boundary (and re-embed every later chunk). So chunks also end after *anchor*
lines, picked by a hash of the line's own text: a weak anchor (one line in ``ANCHOR_EVERY``) once
the chunk holds ``ANCHOR_CHARS``, a strong one (one in ``STRONG_ANCHOR_EVERY``) once it holds
``STRONG_ANCHOR_CHARS``. A strong anchor nearly always cuts whatever came before it, so after an
edit the old and new boundaries meet again within a chunk or two.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MIN_CHARS = 1_000
MAX_CHARS = 2_000
# Anchors (see the docstring): one line in ANCHOR_EVERY ends a chunk holding ANCHOR_CHARS, one in
# STRONG_ANCHOR_EVERY a chunk holding STRONG_ANCHOR_CHARS. Tried on a 100 000-line note of distinct
# 60-character lines, 150 random one-line edits, inserts and deletes: at most 3 chunks changed
# (1.1 on average), 4 350 chunks (greedy cuts at MAX_CHARS: 3 050, but an edit changed ~half).
ANCHOR_CHARS = 1_500
ANCHOR_EVERY = 4
STRONG_ANCHOR_CHARS = 500
STRONG_ANCHOR_EVERY = 32
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


def _rank(line: str) -> int:
    # crc32, not hash(): str hashes differ between processes, and boundaries must not.
    return zlib.crc32(line.encode("utf-8", "surrogatepass"))


def content_chunks(
    content: str | None, *, min_chars: int = MIN_CHARS, max_chars: int = MAX_CHARS
) -> Iterator[Chunk]:
    """The content cut at boundaries: a chunk ends before a heading or after a blank line once it
    holds ``min_chars``, after an anchor line (see the module docstring) and before any line
    that would take it past ``max_chars``."""
    if not content:
        return
    # The anchors' thresholds scale with the bounds (tests cut small chunks).
    strong_chars = min_chars * STRONG_ANCHOR_CHARS // MIN_CHARS
    anchor_chars = max(min_chars, max_chars * ANCHOR_CHARS // MAX_CHARS)
    lines = content.split("\n")  # C speed; the list is what a chunker needs anyway
    start = 0  # index of the current chunk's first line
    offset = 0  # character offset of that line
    size = 0  # characters in the current chunk (newlines included)
    prev_blank = False
    for i, line in enumerate(lines):
        n = len(line) + 1
        if size and (
            (size >= min_chars and (prev_blank or _is_heading(line)))
            or size + n > max_chars
            or (size >= strong_chars and _anchor(lines[i - 1], size >= anchor_chars))
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


def _anchor(line: str, weak_too: bool) -> bool:
    if _is_heading(line) or not line.strip():  # a heading stays with what it heads; blank lines
        return False  # are paragraph boundaries already
    rank = _rank(line)
    return rank % STRONG_ANCHOR_EVERY == 0 or (weak_too and rank % ANCHOR_EVERY == 0)


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
