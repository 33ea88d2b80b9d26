"""Ranking by meaning (SPEC §16): each process holds its owners' vector indexes
(``content.search.vectors``) and keeps them current from a change log, never by a rebuild.

Why in memory: scanning from the database on every search would move ~100 MB a query. An index
is built once per owner (one build at a time per owner: others wait for it) and then follows the
library: indexing writes one ``SearchChange`` row per item in the transaction that replaces its
chunks, and each search reads the owner's rows past what its index reflects (one indexed query,
usually empty), loads just those items' chunks and applies them as deltas and tombstones. A write
through any process is thus seen by the next search in every process.

The change log is read with ``id > low`` where ``low`` trails by ``MARGIN`` seconds and the ids
above it already applied are remembered: on PostgreSQL a row with a smaller id may commit after
one with a larger (ids are taken at insert), and a plain "last seen id" would skip it. Applying a
change twice is harmless (an item's rows are replaced whole). Rows older than ``RETENTION`` are
pruned by indexing; an index that has not polled for half that long is rebuilt.

Memory: ``TIDDLY_SEARCH_MEMORY_MB`` caps all owners' indexes of a process together; the least
recently used are dropped. An owner whose index alone would exceed it is never loaded: each of
its searches scans its vectors from storage in blocks, exactly, keeping only the best rows.
"""

from __future__ import annotations

import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from content.models.search import SearchChange, SearchChunk
from content.search import marks, vectors
from content.search.vectors import FIELDS, ChunkHit, ItemKey, OwnerIndex, Rows

__all__ = ["ChunkHit", "OwnerIndex", "clear", "owner_index", "ranking", "vector_of"]

MARGIN = 60.0  # seconds a change-log row may take from its insert to its commit and be seen
RETENTION = float(marks.RETENTION)  # seconds of change log kept (marks.changed prunes)
PACKED_ROW_BYTES = 128 + 32 + 29  # 4-bit codes, sketch bit row, per-row attributes
INT8_ROW_BYTES = 256 + 29


@dataclass(frozen=True)
class Seen:
    """The change-log rows an index version reflects: every id up to ``low``, and ``applied``
    above it."""

    low: int
    applied: frozenset[int]
    polled: float


_lock = threading.Lock()
_cache: OrderedDict[tuple[Any, str], OwnerIndex] = OrderedDict()
_owner_locks: dict[tuple[Any, str], threading.Lock] = {}
stats = {"builds": 0, "updates": 0, "scans": 0}


def clear() -> None:
    with _lock:
        _cache.clear()


def ranking(
    owner_id: Any,
    model: str,
    query: np.ndarray,
    *,
    types: set[str] | None = None,
    keys: set[ItemKey] | None = None,
) -> Iterator[ChunkHit]:
    """The owner's items of ``types`` (and among ``keys``) best first by their best chunk: an
    exact scan of every row of those items when they hold fewer than ``EXACT_ROWS``."""
    index = owner_index(owner_id, model)
    if index is None:
        return vectors.iter_item_ranking(_scan(owner_id, model, query, types, keys), query)
    allowed = index.allowed(types, keys)
    return vectors.iter_item_ranking(
        index, query, allowed, lambda ids: _int8_cosines(owner_id, ids, query)
    )


def _int8_cosines(owner_id: Any, chunk_ids: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The stored (int8) cosines of ``chunk_ids`` with ``query``; a chunk no longer stored
    keeps no score (-inf: it sorts last)."""
    found = {
        pk: (vector, scale)
        for pk, owner, vector, scale in SearchChunk.objects.filter(
            pk__in=chunk_ids.tolist()
        ).values_list("id", "owner_id", "vector", "scale")
        if owner == owner_id
    }
    out = np.full(len(chunk_ids), -np.inf, dtype=np.float32)
    at = [i for i, pk in enumerate(chunk_ids.tolist()) if pk in found]
    if at:
        rows = [found[pk] for pk in chunk_ids[at].tolist()]
        codes = np.frombuffer(b"".join(bytes(v) for v, _ in rows), np.int8).reshape(len(at), -1)
        out[at] = (codes.astype(np.float32) @ query) * np.array([s for _, s in rows], np.float32)
    return out


def vector_of(owner_id: Any, model: str, key: ItemKey) -> np.ndarray | None:
    """The mean of an item's chunk vectors (normalised), or None when it is not indexed."""
    index = owner_index(owner_id, model)
    if index is None:
        chunks = SearchChunk.objects.filter(
            owner_id=owner_id, model=model, item_type=key[0], item_id=key[1]
        )
        rows, _ = _read(chunks.order_by("seq"))
        index = vectors.build(model, rows, [key])
    return vectors.item_vector(index, key)


def owner_index(owner_id: Any, model: str) -> OwnerIndex | None:
    """The owner's index of ``model``, current with the change log; None when it would not fit
    in ``TIDDLY_SEARCH_MEMORY_MB`` (the caller scans storage instead)."""
    key = (owner_id, model)
    with _lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
    changes = None
    if cached is not None and time.monotonic() - cached.seen.polled < RETENTION / 2:
        changes = _changes(owner_id, cached.seen.low)
        if not {c[0] for c in changes} - cached.seen.applied:
            cached.seen = _seen(changes, cached.seen.low)
            return cached
    with _owner_lock(key):  # one build or update at a time per owner: the others wait for it
        with _lock:
            latest = _cache.get(key)
        current: OwnerIndex | None
        if latest is not None and time.monotonic() - latest.seen.polled < RETENTION / 2:
            if latest is not cached or changes is None:  # another search applied some meanwhile
                changes = _changes(owner_id, latest.seen.low)
            current = _apply(latest, owner_id, changes)
        else:
            current = _build(owner_id, model)
        _store(key, current)
    return current


def _owner_lock(key: tuple[Any, str]) -> threading.Lock:
    with _lock:
        return _owner_locks.setdefault(key, threading.Lock())


def _cap() -> float:
    return float(settings.TIDDLY_SEARCH_MEMORY_MB) * 2**20


def _store(key: tuple[Any, str], index: OwnerIndex | None) -> None:
    """Keep ``index`` as the most recently used, then drop the least recently used indexes
    until all fit the cap (``index`` too, when it alone has outgrown it)."""
    with _lock:
        if index is None:
            _cache.pop(key, None)
            return
        _cache[key] = index
        _cache.move_to_end(key)
        total = sum(i.nbytes for i in _cache.values())
        while _cache and total > _cap():
            _, dropped = _cache.popitem(last=False)
            total -= dropped.nbytes


def _changes(owner_id: Any, low: int) -> list[tuple[int, str, Any, Any]]:
    rows = SearchChange.objects.filter(owner_id=owner_id, id__gt=low).order_by("id")
    return list(rows.values_list("id", "item_type", "item_id", "at"))


def _seen(changes: list[tuple[int, str, Any, Any]], low: int) -> Seen:
    """What an index reflects once ``changes`` (every row above ``low``) are applied: ``low``
    moves up to the newest row older than ``MARGIN`` (a row committed later than that after its
    insert would be missed: indexing's transactions take well under a second)."""
    cutoff = timezone.now() - timedelta(seconds=MARGIN)
    settled = [c[0] for c in changes if c[3] < cutoff]
    low = max([low, *settled])
    return Seen(low, frozenset(c[0] for c in changes if c[0] > low), time.monotonic())


def _apply(
    index: OwnerIndex, owner_id: Any, changes: list[tuple[int, str, Any, Any]]
) -> OwnerIndex:
    fresh = [c for c in changes if c[0] not in index.seen.applied]
    if fresh:
        keys = list(dict.fromkeys((c[1], c[2]) for c in fresh))
        chunks = SearchChunk.objects.filter(owner_id=owner_id, model=index.model)
        by_type: dict[str, list[Any]] = {}
        for item_type, item_id in keys:
            by_type.setdefault(item_type, []).append(item_id)
        parts: list[Rows] = []
        items: list[ItemKey] = []
        for item_type, ids in by_type.items():
            rows, found = _read(
                chunks.filter(item_type=item_type, item_id__in=ids).order_by("item_id", "seq"),
                first=len(items),
            )
            parts.append(rows)
            items += found
        index = vectors.update(index, keys, vectors.concat(parts), items)
        stats["updates"] += 1
    index.seen = _seen(changes, index.seen.low)
    return index


def _build(owner_id: Any, model: str) -> OwnerIndex | None:
    """The owner's index from storage, or None when it would exceed the memory cap. The change
    log is read first: whatever committed before is in the chunks read after it."""
    cutoff = timezone.now() - timedelta(seconds=MARGIN)
    log = SearchChange.objects.filter(owner_id=owner_id)
    low = log.filter(at__lt=cutoff).aggregate(low=Max("id"))["low"] or 0
    changes = list(log.filter(id__gt=low).values_list("id", "item_type", "item_id", "at"))
    chunks = SearchChunk.objects.filter(owner_id=owner_id, model=model)
    count = chunks.count()
    per_row = PACKED_ROW_BYTES if count > vectors.EXACT_ROWS else INT8_ROW_BYTES
    if count * per_row > _cap():
        return None
    rows, items = _read(
        chunks.order_by("item_type", "item_id", "seq"), pack=count > vectors.EXACT_ROWS
    )
    index = vectors.build(model, rows, items)
    index.seen = _seen(changes, low)
    vectors.return_freed_memory()
    stats["builds"] += 1
    return index


_COLUMNS = (
    "item_type", "item_id", "field", "start_line", "end_line", "start_char", "id", "vector",
    "scale",
)  # fmt: skip


def _read(chunks: Any, *, first: int = 0, pack: bool = False) -> tuple[Rows, list[ItemKey]]:
    """Rows of ``chunks`` (ordered by item) and their items (``item_of`` counts from ``first``).
    Typed arrays, not lists of Python numbers (36 bytes each): reading 480 000 chunks peaks at
    little more than the index itself. ``pack``: 4-bit codes, a block at a time."""
    blob, pending = bytearray(), bytearray()
    scales, item_of, fields = array("f"), array("i"), array("b")
    starts, ends, chars, ids = array("i"), array("i"), array("q"), array("q")
    items: list[ItemKey] = []
    last: ItemKey | None = None
    dim = 0
    for item_type, item_id, fld, start, end, char, pk, vector, scale in chunks.values_list(
        *_COLUMNS
    ).iterator(chunk_size=10_000):
        key = (item_type, item_id)
        if key != last:
            items.append(key)
            last = key
        scales.append(scale)
        item_of.append(first + len(items) - 1)
        fields.append(FIELDS.index(fld) if fld in FIELDS else 0)
        starts.append(start or 0)
        ends.append(end or 0)
        chars.append(char)
        ids.append(pk)
        dim = len(vector)
        if not pack:
            blob += vector
            continue
        pending += vector
        if len(pending) >= vectors.BLOCK * dim:
            _pack_into(blob, pending, dim, scales)
    if pending:
        _pack_into(blob, pending, dim, scales)
    n = len(scales)
    width = (dim // 2 if pack else dim) if n else 256
    rows = Rows(
        # Views of the typed arrays (no copy of the largest piece).
        codes=np.frombuffer(blob, dtype=np.uint8 if pack else np.int8).reshape(n, width),
        scales=np.frombuffer(scales, dtype=np.float32),
        item_of=np.frombuffer(item_of, dtype=np.int32),
        field=np.frombuffer(fields, dtype=np.int8),
        start_line=np.frombuffer(starts, dtype=np.int32),
        end_line=np.frombuffer(ends, dtype=np.int32),
        start_char=np.frombuffer(chars, dtype=np.int64),
        chunk_id=np.frombuffer(ids, dtype=np.int64),
        packed=pack and n > 0,
    )
    return rows, items


def _pack_into(blob: bytearray, pending: bytearray, dim: int, scales: array) -> None:
    """Pack the int8 rows in ``pending`` (the last rows of ``scales``) onto ``blob``, empty
    ``pending`` and rescale those rows' ``scales``."""
    codes, factor = vectors.pack(np.frombuffer(bytes(pending), dtype=np.int8).reshape(-1, dim))
    blob += codes.tobytes()
    del pending[:]
    view = np.frombuffer(scales, dtype=np.float32)
    view[len(view) - len(factor) :] *= factor
    del view  # releases the buffer: ``scales`` can grow again


def _scan(
    owner_id: Any,
    model: str,
    query: np.ndarray,
    types: set[str] | None,
    keys: set[ItemKey] | None,
) -> OwnerIndex:
    """An owner too large for the cap: its rows passing the filters scanned from storage a
    block at a time, exactly (int8), keeping the best ``RERANK`` as a small index."""
    stats["scans"] += 1
    chunks = SearchChunk.objects.filter(owner_id=owner_id, model=model)
    if types is not None:
        chunks = chunks.filter(item_type__in=sorted(types))
    best: Rows | None = None
    best_scores = np.zeros(0, np.float32)
    items: list[ItemKey] = []
    position: dict[ItemKey, int] = {}
    block: list[tuple[Any, ...]] = []
    iterator = chunks.values_list(*_COLUMNS).iterator(chunk_size=vectors.BLOCK)
    while True:
        block = [r for _, r in zip(range(vectors.BLOCK), iterator, strict=False)]
        if not block:
            break
        if keys is not None:
            block = [r for r in block if (r[0], r[1]) in keys]
        if not block:
            continue
        for r in block:
            position.setdefault((r[0], r[1]), len(position))
        rows = _rows_of(block, position)
        scores = rows.cosines(query)
        if best is not None:
            rows, scores = vectors.concat([best, rows]), np.concatenate([best_scores, scores])
        keep = np.argsort(-scores, kind="stable")[: vectors.RERANK]
        best, best_scores = rows.take(keep), scores[keep]
    items = list(position)
    if best is None:
        return vectors.build(model, vectors.empty_rows(len(query)), [])
    order = np.lexsort((best.chunk_id, best.item_of))  # each item's rows together, in order
    return vectors.build(model, best.take(order), items)


def _rows_of(block: list[tuple[Any, ...]], position: dict[ItemKey, int]) -> Rows:
    vectors_ = b"".join(bytes(r[7]) for r in block)
    return Rows(
        codes=np.frombuffer(vectors_, dtype=np.int8).reshape(len(block), -1),
        scales=np.array([r[8] for r in block], np.float32),
        item_of=np.array([position[(r[0], r[1])] for r in block], np.int32),
        field=np.array([FIELDS.index(r[2]) if r[2] in FIELDS else 0 for r in block], np.int8),
        start_line=np.array([r[3] or 0 for r in block], np.int32),
        end_line=np.array([r[4] or 0 for r in block], np.int32),
        start_char=np.array([r[5] for r in block], np.int64),
        chunk_id=np.array([r[6] for r in block], np.int64),
    )
