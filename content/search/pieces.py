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
from collections.abc import Iterator
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


def split(content: str) -> list[Piece]:
    """The pieces ``tiddly_word_pieces`` (SQL, content migration 0023) gives for ``content``:
    none for a content of at most ``FTS_CONTENT_CHARS`` characters (``search_vector`` holds it)."""
    if len(content) <= FTS_CONTENT_CHARS:
        return []
    lines = content.split("\n")
    pieces = []
    for block, start in enumerate(range(0, len(lines), LINES)):
        text = "\n".join(lines[start : start + LINES])
        for part in range(max(len(text) - 1, 0) // PART + 1):
            pieces.append((block, part, text[part * PART : part * PART + PART + OVERLAP]))
    return pieces


def digest(body: str) -> str:
    """A piece's hash as PostgreSQL's ``md5(body)`` gives it."""
    return hashlib.md5(body.encode(), usedforsecurity=False).hexdigest()


@contextmanager
def written(item: Item, *, created: bool) -> Iterator[None]:
    """Wrap the save of ``item`` whose content is being written (inside the write's transaction):
    on PostgreSQL, for a long content, the trigger is told to leave the row and its changed
    pieces are written after the save. Anywhere else this does nothing."""
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
    _write(table, item.pk, split(content), created=created)


def _write(table: str, pk: Any, pieces: list[Piece], *, created: bool) -> None:
    words = f'"{table}_words"'
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, '', true)", [SETTING])
        stored: dict[tuple[int, int], str | None] = {}
        if not created:
            cursor.execute(f"SELECT block, part, body_hash FROM {words} WHERE item_id = %s", [pk])
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
