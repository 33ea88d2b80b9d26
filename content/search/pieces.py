"""The word pieces of a long note's or bookmark's content, written by the write itself.

PostgreSQL:

A content longer than ``search_vector`` holds is also kept in ``"{table}_words"`` (content
migrations 0017, 0023 and 0028): its 100-line blocks, each cut in parts of 100 000 characters
that overlap by 200, one tsvector and one md5 each. An item's trigger keeps them, but it splits
and hashes the whole content in SQL on every write, most of what a one-line edit of a 100 000-line
note costs. (A trigger on the pieces keeps the distinct words of every ten blocks in
``"{table}_word_sets"`` for keyword search, content migration 0029, whoever writes them.)
``written`` lets the service's create, update and edit paths do that work here instead, on the
content they already hold, and tell the trigger to leave the row alone (content migration 0025):
the same pieces, and only the changed ones tokenised. Other writers keep the trigger.

SQLite (content migration 0026): the FTS5 table ``"{table}_words"`` holds the body in pieces
whose places (byte start and length, and a hash of their text) are in ``"{table}_word_spans"``.
For a long content ``written`` cuts the pieces where the content's own lines say (``cut``: a
line whose length and eight of its bytes hash to one value in 64 ends a piece, within a minimum
and a maximum size), so an edit leaves the pieces before and after it as they were, only moved; those
it finds again by their hash are kept, the others are dropped with the text the table indexed
(read from the stored content, never from memory) and the new ones written. The trigger leaves
the row's body while the save names it in ``"{table}_words_written"``.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection

from content.dbops import FTS_CONTENT_CHARS
from content.models import Item
from content.queries.fulltext import CONFIG

LINES = 100  # lines in a block (content migration 0028)
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
    item: Item,
    *,
    created: bool,
    before: str | None = None,
    spans: Sequence[Span] = (),
    prepared: Prepared | None = None,
) -> Iterator[None]:
    """Wrap the save of ``item`` whose content is being written (inside the write's transaction):
    for a long content, the trigger is told to leave the row and its changed pieces are written
    here. An update passes the content ``before`` it (on SQLite a content of the same length is
    left to the trigger), an edit its ``spans`` too (on PostgreSQL only the blocks they touched
    are cut). Prompts and short contents are left to the triggers. ``prepared``: what
    ``prepare`` cut of a created item's content before the transaction."""
    table = item._meta.db_table
    content = item.content or ""
    if connection.vendor == "sqlite":
        with _sqlite_written(
            item, table, content, created=created, before=before, edits=spans, prepared=prepared
        ):
            yield
        return
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


# SQLite (content migration 0026).
SQLITE_AT = 65_536  # characters: a shorter content is a few pieces, left to the trigger
ROWS = 4_096  # rowid = item key * ROWS + piece number; 0 is the title's row
SMALLEST = 12 * 1024  # bytes: at most 4 095 pieces for 48 MiB
LARGEST = 48 * 1024
SQLITE_OVERLAP = 256  # bytes a piece shares with the next: a phrase across the cut is whole
WRITTEN = "*"  # names a row being created (its id is not known before the insert)
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


def cut(data: bytes) -> list[tuple[int, int]]:
    """The pieces (start, end) ``data`` is cut in, before overlap. A cut falls after the first
    line at least ``SMALLEST`` past the last cut that its own bytes choose (its length and
    eight of them, hashed), so the cuts before an edit stay and those after it come back,
    moved, within a piece or two; past ``LARGEST`` with no such line, after the last line that
    fits, or mid-line."""
    if not data:
        return []
    array = np.frombuffer(data, dtype=np.uint8)
    ends, chosen = _lines(array, 0, len(data), hashed=_hashed(data.count(b"\n"), len(data)))
    pieces, _ = _walk(ends, chosen, 0, len(data), len(data))
    return pieces


def _hashed(newlines: int, size: int) -> bool:
    """Whether lines choose the cuts (lines of a few bytes each are too many to hash)."""
    return newlines <= size // 8


def _lines(array: Any, lo: int, hi: int, *, hashed: bool) -> tuple[Any, list[int]]:
    """The ends of the lines from ``lo`` (a line's start) that end by ``hi`` (after their
    newline), and those of them the lines' own bytes choose."""
    ends = np.flatnonzero(array[lo:hi] == 10) + (lo + 1)
    if not hashed or not len(ends):
        return ends, []
    starts = np.concatenate(([lo], ends[:-1]))
    last = np.maximum(ends - 2, starts)  # before the newline (or the empty line's newline)
    length = last - starts
    mixed = length.astype(np.uint64) * _MIX[0]
    for k in range(1, 9):  # eight bytes spread over the line
        mixed ^= array[starts + length * k // 8].astype(np.uint64)
        mixed *= _MIX[k % 3]
        mixed ^= mixed >> np.uint64(29)
    return ends, ends[(mixed >> np.uint64(58)) == 0].tolist()


def _walk(
    ends: Any, chosen: list[int], pos: int, hi: int, size: int, stop: int | None = None
) -> tuple[list[tuple[int, int]], int]:
    """The cuts from ``pos`` on, while the lines known (up to ``hi``) decide them, and the
    position reached; with ``stop``, it ends at the first cut at or past ``stop``."""
    pieces: list[tuple[int, int]] = []
    while True:
        if hi < size and pos + LARGEST + 1 > hi:
            return pieces, pos  # the next cut needs lines past ``hi``
        i = bisect.bisect_left(chosen, pos + SMALLEST)
        if i < len(chosen) and chosen[i] <= pos + LARGEST and chosen[i] < size:
            end = chosen[i]
        elif size - pos <= LARGEST:
            pieces.append((pos, size))
            return pieces, size
        else:
            j = int(np.searchsorted(ends, pos + LARGEST, side="right")) - 1
            end = int(ends[j]) if j >= 0 and ends[j] >= pos + SMALLEST else pos + LARGEST
        pieces.append((pos, end))
        pos = end
        if stop is not None and pos >= stop:
            return pieces, pos


def recut(
    data: bytes, old: Sequence[int], old_size: int, first: int, tail: int, lines_added: int
) -> tuple[list[tuple[int, int]], int, int] | None:
    """``cut(data)`` for a content whose previous version (``old_size`` bytes, cut by ``cut``
    at ``old``, the pieces' starts in order) differs only in bytes ``first`` (from the start)
    to ``tail`` (from the end), walking only the lines near the edit: the cuts before it that
    saw none of it stay, and once a cut after it falls on an old one, moved, the rest follow.
    Also how many pieces at the start and from which piece on they are old ones (moved).
    None when the old cuts cannot be relied on (the whole content is cut instead)."""
    size = len(data)
    count = data.count(b"\n")
    hashed = _hashed(count, size)
    if not old or old[0] != 0 or hashed != _hashed(count - lines_added, old_size):
        return None
    line = data.rfind(b"\n", 0, first) + 1  # the edited line's start
    keep = 0  # old cuts up to ``old[keep]`` saw none of the edit (each looks LARGEST ahead)
    while keep + 1 < len(old) and old[keep] + LARGEST + 1 <= line:
        keep += 1
    shift = size - old_size
    after = data.find(b"\n", size - tail)  # the line where the edit ends, in the new content
    after = size if after < 0 else after + 1
    later = {cut + shift: n for n, cut in enumerate(old) if cut + shift >= after}
    array = np.frombuffer(data, dtype=np.uint8)

    def walk(pos: int, hi: int, stop: int) -> tuple[list[tuple[int, int]], int]:
        # The lines from the one ``pos`` is on up to ``hi``, and the cuts they decide.
        hi = min(size, hi)
        ends, chosen = _lines(array, data.rfind(b"\n", 0, pos) + 1, hi, hashed=hashed)
        return _walk(ends, chosen, pos, hi, size, stop=stop)

    pieces = [(old[n], old[n + 1]) for n in range(keep)]
    pos = old[keep]
    while pos < size:
        walked, pos = walk(pos, max(pos, after) + 4 * LARGEST, stop=after)
        pieces += walked
        while pos < size and pos >= after:
            if pos in later and data[pos - 1] == 10:  # back on an old cut: the rest follow
                rest = [*old[later[pos] :], old_size]
                moved = len(pieces)
                pieces += [(a + shift, b + shift) for a, b in itertools.pairwise(rest)]
                return pieces, keep, moved
            walked, pos = walk(pos, pos + 4 * LARGEST, stop=pos + 1)
            pieces += walked
    return pieces, keep, len(pieces)


@dataclass(frozen=True)
class Prepared:
    """A new content's pieces on SQLite: its places, texts and hashes."""

    content: str
    data: bytes
    places: list[tuple[int, int]]
    bodies: list[memoryview]
    hashes: list[bytes]


def prepare(item: Item) -> Prepared | None:
    """SQLite: the pieces of a new item's long content, cut and hashed before the create's
    transaction (they depend on the text alone), so its write lock is held for the writes only."""
    content = item.content or ""
    if (
        connection.vendor != "sqlite"
        or item._meta.db_table not in TABLES
        or len(content) <= SQLITE_AT
    ):
        return None
    return _cut_whole(content)


def _cut_whole(content: str) -> Prepared:
    data = content.encode()
    places = cut(data)
    bodies = _bodies(data, places)
    return Prepared(content, data, places, bodies, [_hash(body) for body in bodies])


def _bodies(data: bytes, places: list[tuple[int, int]]) -> list[memoryview]:
    # Views, not copies: a kept piece's text is never read, and a new one's goes to SQLite as is.
    view = memoryview(data)
    return [view[start : min(len(data), end + SQLITE_OVERLAP)] for start, end in places]


def _hash(body: memoryview) -> bytes:
    return hashlib.sha1(body, usedforsecurity=False).digest()


@contextmanager
def _sqlite_written(
    item: Item,
    table: str,
    content: str,
    *,
    created: bool,
    before: str | None,
    edits: Sequence[Span],
    prepared: Prepared | None = None,
) -> Iterator[None]:
    if (
        table not in TABLES
        or len(content) <= SQLITE_AT
        # The same length: the trigger compares the stored pieces in place, faster than a cut.
        or (before is not None and len(before) == len(content))
    ):
        yield
        return
    spans, words = f'"{table}_word_spans"', f'"{table}_words"'
    stored: list[tuple[int, int, int, bytes | None]] = []
    base = 0
    if created:  # nothing stored to keep
        plan = prepared
        if plan is None or plan.content is not content:  # not cut before the transaction
            plan = _cut_whole(content)
        data, places, bodies, hashes = plan.data, plan.places, plan.bodies, plan.hashes
    else:
        data = content.encode()
        with connection.cursor() as cursor:
            base = _key(cursor, table, item.pk.hex) * ROWS
            cursor.execute(
                f"SELECT rowid, start, length, hash FROM {spans} WHERE rowid > %s AND rowid < %s "
                "ORDER BY start",
                [base, base + ROWS],
            )
            stored = cursor.fetchall()
        known: dict[int, tuple[int, bytes]] = {}  # piece -> (rowid, hash) of an old piece, moved
        old_size = max((start + length - 1 for _, start, length, _ in stored), default=0)
        cuts = _recut(data, content, before, edits, stored, old_size) if stored and before else None
        if cuts is None:
            places = cut(data)
        else:
            places, prefix, moved_from = cuts
            shift = len(data) - old_size
            by_start = {
                start - 1: (rowid, bytes(hashed)) for rowid, start, _, hashed in stored if hashed
            }
            for piece, (begin, _) in enumerate(places):
                was = begin if piece < prefix else begin - shift if piece >= moved_from else None
                if was in by_start:
                    known[piece] = by_start[was]
        bodies = _bodies(data, places)
        hashes = [known[p][1] if p in known else _hash(body) for p, body in enumerate(bodies)]
    if len(places) >= ROWS:
        yield  # beyond the numbers a row has: the trigger's pieces
        return
    name = WRITTEN if created else item.pk.hex
    kept: dict[int, tuple[int, int]] = {}  # piece -> (rowid, stored start)
    with connection.cursor() as cursor:
        if stored:
            by_hash: dict[bytes, list[tuple[int, int]]] = {}
            gone = []
            for rowid, start, _, hashed in stored:
                if hashed is None:
                    gone.append(rowid)
                else:
                    by_hash.setdefault(bytes(hashed), []).append((rowid, start))
            for piece, hashed in enumerate(hashes):
                if by_hash.get(hashed):
                    kept[piece] = by_hash[hashed].pop()
            gone += [rowid for left in by_hash.values() for rowid, _ in left]
            if gone:
                # Dropped with the text the index holds: the stored content, not yet replaced.
                rowids = json.dumps(gone)
                cursor.execute(
                    f"INSERT INTO {words} ({words}, rowid, body) SELECT 'delete', s.rowid, "
                    "substr(CAST(coalesce(t.content, '') AS BLOB), s.start, s.length) "
                    f'FROM {spans} s CROSS JOIN "{table}" t ON t.id = %s '
                    "WHERE s.rowid IN (SELECT value FROM json_each(%s))",
                    [item.pk.hex, rowids],
                )
                cursor.execute(
                    f"DELETE FROM {spans} WHERE rowid IN (SELECT value FROM json_each(%s))",
                    [rowids],
                )
        cursor.execute(f'INSERT INTO "{table}_words_written" (id) VALUES (%s)', [name])
        yield
        cursor.execute(f'DELETE FROM "{table}_words_written" WHERE id = %s', [name])
        if created:
            base = _key(cursor, table, item.pk.hex) * ROWS
        taken = {rowid - base for rowid, _ in kept.values()}
        free = (n for n in range(1, ROWS) if n not in taken)
        added = [
            (base + next(free), places[piece][0] + 1, len(body), hashes[piece], body)
            for piece, body in enumerate(bodies)
            if piece not in kept
        ]
        moved = [
            (places[piece][0] + 1, rowid)
            for piece, (rowid, start) in kept.items()
            if start != places[piece][0] + 1
        ]
        # One statement each, not executemany's one per row: each row's statement gives the GIL
        # back, and taking it again waits out another thread's turn (a body being parsed) while
        # this one holds the write lock.
        if added:
            # The text bound: the content when every piece is new, else only the new pieces
            # (binding copies it).
            if len(added) == len(bodies):
                text, at = data, [start for _, start, _, _, _ in added]
            else:
                text = b"".join(body for *_, body in added)
                # Each new piece's offset in ``text``, from 1.
                at = list(itertools.accumulate((len(body) for *_, body in added[:-1]), initial=1))
            places_json = json.dumps(
                [
                    [rowid, start, length, a]
                    for (rowid, start, length, _, _), a in zip(added, at, strict=True)
                ]
            )
            cursor.execute(
                f"INSERT INTO {words} (rowid, body) SELECT {_AT0}, substr(%s, {_AT3}, {_AT2}) "
                "FROM json_each(%s) j",
                [text, places_json],
            )
            digests = b"".join(row[3] for row in added)
            assert len(digests) == DIGEST * len(added)  # every hash a SHA-1
            cursor.execute(
                f"INSERT INTO {spans} (rowid, start, length, hash) SELECT {_AT0}, {_AT1}, "
                f"{_AT2}, substr(%s, j.key * {DIGEST} + 1, {DIGEST}) FROM json_each(%s) j",
                [digests, places_json],
            )
        if moved:
            cursor.execute(
                f"UPDATE {spans} SET start = {_AT0} FROM json_each(%s) j "
                f"WHERE {spans}.rowid = {_AT1}",
                [json.dumps(moved)],
            )


# The items of a JSON array row of json_each (alias j).
_AT0, _AT1, _AT2, _AT3 = (f"json_extract(j.value, '$[{i}]')" for i in range(4))
DIGEST = 20  # bytes of a SHA-1


def _recut(
    data: bytes,
    content: str,
    before: str,
    edits: Sequence[Span],
    stored: Sequence[tuple[int, int, int, bytes | None]],
    old_size: int,
) -> tuple[list[tuple[int, int]], int, int] | None:
    """``recut`` for an edit of ``before`` (``edits``: its spans; ``old_size``: its bytes) whose
    stored pieces are all the service's (a piece the trigger rewrote has no hash: its cuts may
    not be ``cut``'s)."""
    if not edits or len(edits) > MAX_SPANS or any(row[3] is None for row in stored):
        return None
    ordered = sorted(edits)
    shift = sum(len(text) - (end - start) for start, end, text in ordered)
    first = ordered[0][0]
    tail = len(before) - ordered[-1][1]  # characters after the last edit, the same in both
    lines = sum(text.count("\n") - before.count("\n", start, end) for start, end, text in ordered)
    if len(content) != len(before) + shift:
        return None
    return recut(
        data,
        [start - 1 for _, start, _, _ in stored],
        old_size,
        len(content[:first].encode()),
        len(content[len(content) - tail :].encode()),
        lines,
    )


def _key(cursor: Any, table: str, pk_hex: str) -> int:
    cursor.execute(f'SELECT key FROM "{table}_search_key" WHERE id = %s', [pk_hex])
    return int(cursor.fetchone()[0])
