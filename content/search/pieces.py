"""PostgreSQL: the word pieces of a long note's or bookmark's content, written by the write itself.

A content longer than ``search_vector`` holds is also kept in ``"{table}_words"`` (content
migrations 0017 and 0023): its 500-line blocks, each cut in parts of 100 000 characters that
overlap by 200, one tsvector and one md5 each. A trigger keeps them, but it splits and hashes the
whole content in SQL on every write, most of what a one-line edit of a 100 000-line note costs.
``written`` lets the service's create, update and edit paths do that work here instead, on the
content they already hold, and tell the trigger to leave the row alone (content migration 0025):
the same pieces, and only the changed ones tokenised. Other writers keep the trigger.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection

from content.dbops import FTS_CONTENT_CHARS
from content.models import Item
from content.queries.fulltext import CONFIG

LINES = 500  # lines in a block
PART = 100_000  # characters in a part of a long block
OVERLAP = 200  # characters a part shares with the next
SETTING = "tiddly.pieces_written"  # (content migration 0025)
TABLES = frozenset({"content_note", "content_bookmark"})  # prompts are short: their trigger stays

Piece = tuple[int, int, str]  # block, part, body
Span = tuple[int, int, str]  # an edit: start and end in the old content, the new text
MAX_SPANS = 32  # more spans than this: the whole content is split (each costs a block walk)


def split(content: str) -> list[Piece]:
    """The pieces ``tiddly_word_pieces`` (SQL, content migration 0023) gives for ``content``:
    none for a content of at most ``FTS_CONTENT_CHARS`` characters (``search_vector`` holds it)."""
    if len(content) <= FTS_CONTENT_CHARS:
        return []
    lines = content.split("\n")
    pieces = []
    for block, start in enumerate(range(0, len(lines), LINES)):
        pieces += _parts(block, "\n".join(lines[start : start + LINES]))
    return pieces


def _parts(block: int, text: str) -> list[Piece]:
    return [
        (block, part, text[part * PART : part * PART + PART + OVERLAP])
        for part in range(max(len(text) - 1, 0) // PART + 1)
    ]


def edited_blocks(before: str, after: str, spans: Sequence[Span]) -> list[Piece] | None:
    """The pieces of the blocks ``spans`` touched, cut from ``after`` (``before`` with ``spans``
    applied), when no other block can have changed: each span keeps its number of lines, so every
    later line keeps its number. None when that does not hold (the whole content is split)."""
    if not spans or len(spans) > MAX_SPANS or len(before) <= FTS_CONTENT_CHARS:
        return None
    if len(after) <= FTS_CONTENT_CHARS:
        return None
    pieces: list[Piece] = []
    done: set[int] = set()
    line, counted, shift = 0, 0, 0  # the line of ``counted`` in ``before``; growth so far
    for start, end, text in sorted(spans):
        lines = before.count("\n", start, end)
        if lines != text.count("\n"):
            return None
        line += before.count("\n", counted, start)
        counted = start
        for block in range(line // LINES, (line + lines) // LINES + 1):
            if block not in done:
                done.add(block)
                pieces += _parts(block, _block_text(after, start + shift, line, block))
        shift += len(text) - (end - start)
    return pieces


def _block_text(text: str, at: int, line: int, block: int) -> str:
    """Block ``block`` of ``text``, found from offset ``at``, which is on line ``line``."""
    begin = _line_start(text, at, line, block * LINES)
    end = begin - 1
    for _ in range(LINES):  # on to the end of the block's last line
        end = text.find("\n", end + 1)
        if end < 0:
            return text[begin:]
    return text[begin:end]


def _line_start(text: str, at: int, line: int, wanted: int) -> int:
    """The offset where line ``wanted`` of ``text`` starts, walked to from ``at`` on ``line``."""
    pos = at
    if wanted <= line:
        for _ in range(line - wanted + 1):
            pos = text.rfind("\n", 0, pos)
            if pos < 0:
                break
        return pos + 1
    pos -= 1
    for _ in range(wanted - line):
        pos = text.find("\n", pos + 1)
    return pos + 1


def digest(body: str) -> str:
    """A piece's hash as PostgreSQL's ``md5(body)`` gives it."""
    return hashlib.md5(body.encode(), usedforsecurity=False).hexdigest()


@contextmanager
def written(
    item: Item, *, created: bool, before: str | None = None, spans: Sequence[Span] = ()
) -> Iterator[None]:
    """Wrap the save of ``item`` whose content is being written (inside the write's transaction):
    on PostgreSQL, for a long content, the trigger is told to leave the row and its changed
    pieces are written after the save. An edit passes the content ``before`` it and its
    ``spans``, so that only the blocks it touched are cut. Anywhere else this does nothing."""
    table = item._meta.db_table
    content = item.content or ""
    if (
        connection.vendor != "postgresql"
        or table not in TABLES
        or len(content) <= FTS_CONTENT_CHARS
    ):
        # A short content has no pieces; the trigger drops those of a long one it replaces.
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, true)", [SETTING, str(item.pk)])
    yield
    edited = None if before is None else edited_blocks(before, content, spans)
    if edited is not None:
        _write(table, item.pk, edited, created=False, blocks=sorted({b for b, _, _ in edited}))
    else:
        _write(table, item.pk, split(content), created=created)


def _write(
    table: str, pk: Any, pieces: list[Piece], *, created: bool, blocks: list[int] | None = None
) -> None:
    """Write ``pieces`` (every piece of the content, or those of ``blocks`` only) where they
    differ from the stored ones, and drop the stored ones they no longer include."""
    words = f'"{table}_words"'
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, '', true)", [SETTING])
        stored: dict[tuple[int, int], str | None] = {}
        if not created:
            only = "" if blocks is None else " AND block = ANY(%s)"
            cursor.execute(
                f"SELECT block, part, body_hash FROM {words} WHERE item_id = %s{only}",
                [pk] if blocks is None else [pk, blocks],
            )
            stored = {(block, part): hashed for block, part, hashed in cursor.fetchall()}
        kept = {(block, part) for block, part, _ in pieces}
        gone = [key for key in stored if key not in kept]
        if gone:
            cursor.execute(
                f"DELETE FROM {words} WHERE item_id = %s AND (block, part) IN "
                "(SELECT * FROM unnest(%s::integer[], %s::integer[]))",
                [pk, [b for b, _ in gone], [p for _, p in gone]],
            )
        changed = [
            (block, part, body, hashed)
            for block, part, body in pieces
            if stored.get((block, part)) != (hashed := digest(body))
        ]
        if not changed:
            return
        cursor.execute(
            f"INSERT INTO {words} (item_id, block, part, vector, body_hash) "
            f"SELECT %s, n.block, n.part, to_tsvector('{CONFIG}'::regconfig, n.body), n.hash "
            "FROM unnest(%s::integer[], %s::integer[], %s::text[], %s::text[]) "
            "AS n(block, part, body, hash) ON CONFLICT (item_id, block, part) DO UPDATE "
            "SET vector = EXCLUDED.vector, body_hash = EXCLUDED.body_hash",
            [pk, *_columns(changed)],
        )


def _columns(changed: list[tuple[int, int, str, str]]) -> list[list[object]]:
    return [[row[i] for row in changed] for i in range(4)]
