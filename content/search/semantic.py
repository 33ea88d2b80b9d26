"""Ranking by meaning (SPEC §16): a per-process, per-owner in-memory matrix of chunk vectors.

Why in memory, and how small: loaded once per owner and reused until the owner's
``SearchGeneration`` changes (one primary-key read per search); scanning from the database on every
search would move ~100 MB per query. The database keeps int8 vectors (one byte a dimension plus a
scale). A small index (up to ``EXACT_ROWS`` chunks) is held as int8 and scanned whole, exactly. A
large one is held as **4-bit codes** (two a byte, scaled per row: 128 bytes a 256-dimension chunk)
plus a 256-bit sign sketch (centred on the index's mean, 32 bytes a row, popcount in numpy) that
picks ``RERANK`` candidates, which the 4-bit codes then score. The benchmark's 480 000 chunks are
thus ~90 MB in memory where int8 would be ~150 MB and float32 ~500 MB: the web process stays within
SPEC §16's 200 MB above idle with the model loaded, and 4-bit cosines of 256 dimensions differ from
int8's by about 1 %, which reorders only near-ties. pgvector is not needed for this and not used.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from content.models.search import SearchChunk, SearchGeneration

EXACT_ROWS = 65_536  # above this many chunks: 4-bit codes and a sketch (see the docstring)
RERANK = 8_192
BLOCK = 16_384
MAX_OWNERS = 4  # owners' matrices kept per process (least recently used dropped)
FIELDS = ("header", "content")


@dataclass
class OwnerIndex:
    generation: int
    model: str
    codes: np.ndarray  # int8 (n, dim), or with ``packed`` uint8 (n, dim / 2): two 4-bit codes
    scales: np.ndarray  # float32 (n,): a row's cosine is (its codes · query) * its scale
    item_of: np.ndarray  # int32 (n,): index into ``items``
    field: np.ndarray  # int8 (n,): index into FIELDS
    start_line: np.ndarray  # int32 (n,), 0 = none
    end_line: np.ndarray  # int32 (n,)
    start_char: np.ndarray  # int64 (n,)
    chunk_id: np.ndarray  # int64 (n,): SearchChunk primary keys (a hit's stored preview)
    items: list[tuple[str, Any]]
    mean: np.ndarray | None = None
    sketch: np.ndarray | None = None  # uint64 (n, dim/64)
    packed: bool = False

    @property
    def size(self) -> int:
        return len(self.scales)

    @property
    def dim(self) -> int:
        return self.codes.shape[1] * (2 if self.packed else 1)

    def rows(self, which: slice | np.ndarray) -> np.ndarray:
        """Rows ``which`` as float32 (k, dim), still to be multiplied by their scales."""
        block = self.codes[which]
        if not self.packed:
            return block.astype(np.float32)
        return _NIBBLES[block].reshape(len(block), -1)

    def dot(self, which: slice | np.ndarray, query: np.ndarray) -> np.ndarray:
        """Rows ``which`` times ``query`` (k,), still to be multiplied by their scales. Packed:
        the high and the low codes each times their half of the query, less the codes' offset of
        8 (faster than unpacking: two half-width products on the bytes as they are)."""
        block = self.codes[which]
        if not self.packed:
            return block.astype(np.float32) @ query
        high = (block >> 4).astype(np.float32) @ query[0::2]
        low = (block & 15).astype(np.float32) @ query[1::2]
        return high + low - 8 * float(query.sum())


@dataclass(frozen=True)
class ChunkHit:
    item_type: str
    item_id: Any
    score: float
    field: str
    start_line: int | None
    end_line: int | None
    start_char: int
    chunk_id: int = 0


_lock = threading.Lock()
_cache: OrderedDict[tuple[Any, str], OwnerIndex] = OrderedDict()


def generation(owner_id: Any) -> int:
    value = SearchGeneration.objects.filter(owner_id=owner_id).values_list("generation", flat=True)
    return next(iter(value), 0)


def owner_index(owner_id: Any, model: str) -> OwnerIndex:
    """The owner's current matrix for ``model``, rebuilt only when the generation moved."""
    current = generation(owner_id)
    key = (owner_id, model)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached.generation == current:
            _cache.move_to_end(key)
            return cached
    built = _build(owner_id, model, current)
    with _lock:
        _cache[key] = built
        _cache.move_to_end(key)
        while len(_cache) > MAX_OWNERS:
            _cache.popitem(last=False)
    return built


def clear() -> None:
    with _lock:
        _cache.clear()


def _build(owner_id: Any, model: str, gen: int) -> OwnerIndex:
    chunks = SearchChunk.objects.filter(owner_id=owner_id, model=model)
    packed = chunks.count() > EXACT_ROWS
    rows = chunks.order_by("item_type", "item_id", "seq").values_list(
        "item_type", "item_id", "field", "start_line", "end_line", "start_char", "id", "vector",
        "scale",
    )  # fmt: skip
    # Typed arrays, not lists of Python numbers (36 bytes each): building the index of 480 000
    # chunks then peaks at little more than the index itself, and leaves no garbage behind.
    blob = bytearray()
    pending = bytearray()  # int8 rows not yet packed (packed: one BLOCK at a time)
    scales = array("f")
    item_of = array("i")
    fields = array("b")
    starts = array("i")
    ends = array("i")
    chars = array("q")
    ids = array("q")
    items: list[tuple[str, Any]] = []
    last: tuple[str, Any] | None = None
    dim = 0
    for item_type, item_id, fld, start, end, char, pk, vector, scale in rows.iterator(
        chunk_size=10_000
    ):
        key = (item_type, item_id)
        if key != last:
            items.append(key)
            last = key
        scales.append(scale)
        item_of.append(len(items) - 1)
        fields.append(FIELDS.index(fld) if fld in FIELDS else 0)
        starts.append(start or 0)
        ends.append(end or 0)
        chars.append(char)
        ids.append(pk)
        dim = len(vector)
        if not packed:
            blob += vector
            continue
        pending += vector
        if len(pending) >= BLOCK * dim:
            _pack_into(blob, pending, dim, scales)
    if pending:
        _pack_into(blob, pending, dim, scales)
    n = len(scales)
    width = (dim // 2 if packed else dim) if n else 0
    index = OwnerIndex(
        generation=gen,
        model=model,
        # A view of the bytearray (no copy of the largest piece).
        codes=np.frombuffer(blob, dtype=np.uint8 if packed else np.int8).reshape(n, width),
        scales=np.frombuffer(scales, dtype=np.float32),
        item_of=np.frombuffer(item_of, dtype=np.int32),
        field=np.frombuffer(fields, dtype=np.int8),
        start_line=np.frombuffer(starts, dtype=np.int32),
        end_line=np.frombuffer(ends, dtype=np.int32),
        start_char=np.frombuffer(chars, dtype=np.int64),
        chunk_id=np.frombuffer(ids, dtype=np.int64),
        items=items,
        packed=packed,
    )
    if packed and dim % 64 == 0:
        index.mean = _mean(index)
        index.sketch = _sketch_rows(index, index.mean)
    _return_freed_memory()
    return index


#: A byte's two 4-bit codes as float32 (high nibble first): codes 1..15 stand for -7..7.
_NIBBLES = (
    np.stack(np.divmod(np.arange(256), 16), axis=1).astype(np.float32) - 8
)  # fmt: skip


def pack(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows (k, dim) as 4-bit codes (k, dim / 2) and the factor (k,) that rescales each row
    (its largest magnitude maps to 7)."""
    peak = np.abs(block).max(axis=1).astype(np.float32)
    peak[peak == 0] = 1
    codes = (np.rint(block * (7 / peak)[:, None]) + 8).astype(np.uint8)
    return (codes[:, 0::2] << 4) | codes[:, 1::2], peak / 7


def _pack_into(blob: bytearray, pending: bytearray, dim: int, scales: array) -> None:
    """Pack the int8 rows in ``pending`` (the last rows of ``scales``) onto ``blob``, empty
    ``pending`` and rescale those rows' ``scales``."""
    codes, factor = pack(np.frombuffer(bytes(pending), dtype=np.int8).reshape(-1, dim))
    blob += codes.tobytes()
    del pending[:]
    view = np.frombuffer(scales, dtype=np.float32)
    view[len(view) - len(factor) :] *= factor
    del view  # releases the buffer: ``scales`` can grow again


def _return_freed_memory() -> None:
    """Hand the heap the build freed (database rows, fetch buffers: tens of MB for a large index)
    back to the operating system, so the process keeps what the index holds and no more. glibc
    only; elsewhere a no-op."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _mean(index: OwnerIndex) -> np.ndarray:
    total = np.zeros(index.dim, dtype=np.float64)
    for s in range(0, index.size, BLOCK):
        total += index.rows(slice(s, s + BLOCK)).sum(axis=0, dtype=np.float64)
    return (total / max(index.size, 1)).astype(np.float32)


def _sketch_rows(index: OwnerIndex, mean: np.ndarray) -> np.ndarray:
    parts = []
    for s in range(0, index.size, BLOCK):
        parts.append(np.packbits(index.rows(slice(s, s + BLOCK)) > mean, axis=1))
    return np.ascontiguousarray(np.concatenate(parts)).view(np.uint64)


def _exact(index: OwnerIndex, query: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Cosine of ``query`` with every row (or ``rows``): blocks of codes times the float query."""
    if rows is not None:
        return index.dot(rows, query) * index.scales[rows]
    out = np.empty(index.size, dtype=np.float32)
    for s in range(0, index.size, BLOCK):
        out[s : s + BLOCK] = index.dot(slice(s, s + BLOCK), query)
    return out * index.scales


def chunk_ranking(index: OwnerIndex, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Candidate chunk rows and their exact cosine, best first."""
    if index.size == 0 or index.dim != len(query):
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    if index.sketch is None or index.mean is None:
        scores = _exact(index, query)
        rows = np.argsort(-scores, kind="stable")
        return rows, scores[rows]
    bits = np.packbits(query > 0).view(np.uint64)
    words = np.bitwise_count(index.sketch ^ bits)
    distance = words[:, 0].astype(np.int32)
    for w in range(1, words.shape[1]):
        distance += words[:, w]
    keep = min(RERANK, index.size)
    rows = np.argpartition(distance, keep - 1)[:keep]
    scores = _exact(index, query, rows)
    order = np.argsort(-scores, kind="stable")
    return rows[order], scores[order]


def item_ranking(index: OwnerIndex, query: np.ndarray) -> list[ChunkHit]:
    """Items best first, each with its best chunk (ties: the earlier chunk)."""
    return list(iter_item_ranking(index, query))


def iter_item_ranking(index: OwnerIndex, query: np.ndarray) -> Iterator[ChunkHit]:
    """``item_ranking`` built lazily: a caller that needs the best 100 items of 10 000 makes
    100-odd ``ChunkHit`` objects, not 10 000."""
    rows, scores = chunk_ranking(index, query)
    if not len(rows):
        return
    items = index.item_of[rows]
    _, first = np.unique(items, return_index=True)
    first.sort()
    for pos in first.tolist():
        row = int(rows[pos])
        item_type, item_id = index.items[int(items[pos])]
        start = int(index.start_line[row])
        yield ChunkHit(
            item_type=item_type,
            item_id=item_id,
            score=float(scores[pos]),
            field=FIELDS[int(index.field[row])],
            start_line=start or None,
            end_line=int(index.end_line[row]) or None,
            start_char=int(index.start_char[row]),
            chunk_id=int(index.chunk_id[row]),
        )


def item_vector(index: OwnerIndex, item_type: str, item_id: Any) -> np.ndarray | None:
    """The mean of an item's chunk vectors (normalised), or None when it is not indexed."""
    try:
        position = index.items.index((item_type, item_id))
    except ValueError:
        return None
    rows = np.flatnonzero(index.item_of == position)
    mean = (index.rows(rows) * index.scales[rows, None]).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else None
