"""The in-memory vector index of one owner (SPEC §16): rows of chunk vectors that change in place.

An index is a **main** segment (built from storage, or compacted in memory) and a small **delta**
segment of the rows written since, with **tombstones** over main's rows of items changed or
removed since. Why deltas and tombstones over the numpy arrays rather than an ANN engine with
add/remove: the ranking is an exact scan (or a 4-bit scan of sketch candidates), which an append
and a mask keep exact at no cost, where a graph index would cost memory we do not have and recall
we would have to measure again. An update never mutates a published index: it makes a new
``OwnerIndex`` sharing main's arrays (a copy of the tombstones, a new delta), so a search running
meanwhile sees one state. The delta is merged into main (in memory, no storage read) once it holds
more than ``DELTA_ROWS`` rows or an eighth of main; tombstones are dropped then.

How small: a small main (up to ``EXACT_ROWS`` chunks) is int8 and scanned whole, exactly. A large
one is held as **4-bit codes** (two a byte, scaled per row: 128 bytes a 256-dimension chunk) plus
a 256-bit sign sketch centred on main's mean. The sketch's distance to a query is weighted by how
much each dimension can move the cosine (|query| times the dimension's spread): three masked popcounts
instead of one, and it keeps what an exact scan ranks first where the unweighted one lost it. The
best ``RERANK`` rows by that distance are scored on their 4-bit codes (about 1 % off int8).
A search restricted to some items (a type, tags, a saved filter) scores every row of those items
on their codes when they hold fewer than ``EXACT_ROWS``: no approximate step decides for them.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

EXACT_ROWS = 65_536  # above this many chunks: 4-bit codes and a sketch (see the docstring)
RERANK = 16_384
RESCORE = 256  # a packed index's best rows scored again on their int8 vectors (from storage)
BLOCK = 16_384
DOT_ROWS = 2_048  # rows converted to float32 at once
DELTA_ROWS = 4_096  # delta rows merged into main beyond this (or an eighth of main)
FIELDS = ("header", "content")
ItemKey = tuple[str, Any]


@dataclass(frozen=True)
class Rows:
    """Chunk rows with what a hit needs; ``item_of`` indexes the owner's ``OwnerIndex.items``."""

    codes: np.ndarray  # int8 (n, dim), or with ``packed`` uint8 (n, dim / 2): two 4-bit codes
    scales: np.ndarray  # float32 (n,): a row's cosine is (its codes · query) * its scale
    item_of: np.ndarray  # int32 (n,)
    field: np.ndarray  # int8 (n,): index into FIELDS
    start_line: np.ndarray  # int32 (n,), 0 = none
    end_line: np.ndarray  # int32 (n,)
    start_char: np.ndarray  # int64 (n,)
    chunk_id: np.ndarray  # int64 (n,): SearchChunk primary keys (a hit's stored preview)
    packed: bool = False

    @property
    def size(self) -> int:
        return len(self.scales)

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, f).nbytes for f in _ROW_ARRAYS)

    def take(self, which: np.ndarray) -> Rows:
        arrays: dict[str, Any] = {f: getattr(self, f)[which] for f in _ROW_ARRAYS}
        return replace(self, **arrays)

    def rows(self, which: slice | np.ndarray) -> np.ndarray:
        """Rows ``which`` as float32 (k, dim), still to be multiplied by their scales."""
        block = self.codes[which]
        if not self.packed:
            return block.astype(np.float32)
        return _NIBBLES[block].reshape(len(block), -1)

    def dot(self, which: slice | np.ndarray, query: np.ndarray) -> np.ndarray:
        """Rows ``which`` times ``query`` (k,), still to be multiplied by their scales. Packed:
        the high and the low codes each times their half of the query, less the codes' offset of
        8 (faster than unpacking: two half-width products on the bytes as they are). In pieces
        of ``DOT_ROWS``: their float32 copies stay in the CPU's cache (3x faster than whole)."""
        block = self.codes[which]
        out = np.empty(len(block), dtype=np.float32)
        high = np.ascontiguousarray(query[0::2])
        low = np.ascontiguousarray(query[1::2])
        offset = 8 * float(query.sum())
        for s in range(0, len(block), DOT_ROWS):
            part = block[s : s + DOT_ROWS]
            if not self.packed:
                out[s : s + DOT_ROWS] = part.astype(np.float32) @ query
                continue
            products = (part >> 4).astype(np.float32) @ high
            products += (part & 15).astype(np.float32) @ low
            out[s : s + DOT_ROWS] = products - offset
        return out

    def cosines(self, query: np.ndarray, which: np.ndarray | None = None) -> np.ndarray:
        """Cosine of ``query`` with every row (or ``which``), in blocks."""
        if which is not None:
            return self.dot(which, query) * self.scales[which]
        out = np.empty(self.size, dtype=np.float32)
        for s in range(0, self.size, BLOCK):
            out[s : s + BLOCK] = self.dot(slice(s, s + BLOCK), query)
        return out * self.scales


_ROW_ARRAYS = (
    "codes", "scales", "item_of", "field", "start_line", "end_line", "start_char", "chunk_id",
)  # fmt: skip


def empty_rows(dim: int, *, packed: bool = False) -> Rows:
    return Rows(
        codes=np.zeros((0, dim // 2 if packed else dim), np.uint8 if packed else np.int8),
        scales=np.zeros(0, np.float32),
        item_of=np.zeros(0, np.int32),
        field=np.zeros(0, np.int8),
        start_line=np.zeros(0, np.int32),
        end_line=np.zeros(0, np.int32),
        start_char=np.zeros(0, np.int64),
        chunk_id=np.zeros(0, np.int64),
        packed=packed,
    )


def concat(parts: list[Rows]) -> Rows:
    arrays: dict[str, Any] = {
        f: np.concatenate([getattr(p, f) for p in parts]) for f in _ROW_ARRAYS
    }
    return replace(parts[0], **arrays)


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


@dataclass
class OwnerIndex:
    """One owner's rows of one model. ``items`` and ``position`` only grow (shared by the
    versions of an index: a version never looks at positions added after it)."""

    model: str
    main: Rows
    delta: Rows
    items: list[ItemKey]
    position: dict[ItemKey, int]
    dead: np.ndarray  # bool (main.size,): tombstones
    main_span: np.ndarray  # int64 (len(items), 2): an item's rows in main, [start, end)
    delta_span: np.ndarray  # int64 (len(items), 2): its rows in delta
    mean: np.ndarray | None = None
    spread: np.ndarray | None = None  # mean |row - mean| per dimension (weights the sketch)
    sketch: np.ndarray | None = None  # uint64 (main.size, dim/64)
    # Which change-log rows this version reflects (content.search.semantic).
    seen: Any = None
    _by_type: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return self.main.size - int(self.dead.sum()) + self.delta.size

    @property
    def dim(self) -> int:
        codes = self.main.codes if self.main.size else self.delta.codes
        return codes.shape[1] * (2 if self.main.packed and self.main.size else 1)

    @property
    def packed(self) -> bool:
        return self.main.packed

    @property
    def nbytes(self) -> int:
        extra = sum(a.nbytes for a in (self.dead, self.main_span, self.delta_span))
        extra += self.sketch.nbytes if self.sketch is not None else 0
        return self.main.nbytes + self.delta.nbytes + extra + 120 * len(self.items)

    def allowed(
        self, types: set[str] | None = None, keys: set[ItemKey] | None = None
    ) -> np.ndarray | None:
        """Item positions passing ``types`` and ``keys`` (bool over this version's items), or
        None when nothing is restricted."""
        n = len(self.main_span)
        mask: np.ndarray | None = None
        if types is not None:
            mask = np.zeros(n, bool)
            for t in types:
                mask |= self._type_mask(t)  # cached per version: no walk of the items a query
            if mask.all():
                mask = None
        if keys is not None:
            chosen = np.zeros(n, bool)
            at = [p for p in map(self.position.get, keys) if p is not None and p < n]
            chosen[at] = True
            mask = chosen if mask is None else mask & chosen
        return mask

    def _type_mask(self, type_name: str) -> np.ndarray:
        cached = self._by_type.get(type_name)
        if cached is None:
            n = len(self.main_span)
            cached = np.array([t == type_name for t, _ in self.items[:n]], dtype=bool)
            self._by_type[type_name] = cached
        return cached

    def main_rows_of(self, positions: np.ndarray) -> np.ndarray:
        """Main's live rows of the items at ``positions`` (their spans, concatenated)."""
        spans = self.main_span[positions]
        lengths = spans[:, 1] - spans[:, 0]
        spans, lengths = spans[lengths > 0], lengths[lengths > 0]
        if not len(lengths):
            return np.zeros(0, np.int64)
        offsets = np.repeat(spans[:, 0] - np.cumsum(lengths) + lengths, lengths)
        return offsets + np.arange(int(lengths.sum()))

    def gather(self, name: str, rows: np.ndarray) -> np.ndarray:
        """Attribute ``name`` of rows numbered main first, then delta."""
        main, delta = getattr(self.main, name), getattr(self.delta, name)
        if not len(delta):
            return main[rows]
        in_main = rows < self.main.size
        out = np.empty(len(rows), dtype=main.dtype)
        out[in_main] = main[rows[in_main]]
        out[~in_main] = delta[rows[~in_main] - self.main.size]
        return out


def build(model: str, rows: Rows, items: list[ItemKey]) -> OwnerIndex:
    """An index whose main is ``rows`` (each item's rows contiguous, int8; packed here when
    more than ``EXACT_ROWS``)."""
    dim = rows.codes.shape[1] * (2 if rows.packed else 1) if rows.size else 0
    if rows.size > EXACT_ROWS and not rows.packed:
        rows = pack_rows(rows)
    index = OwnerIndex(
        model=model,
        main=rows,
        delta=empty_rows(dim),
        items=items,
        position={key: p for p, key in enumerate(items)},
        dead=np.zeros(rows.size, bool),
        main_span=_spans(rows.item_of, len(items)),
        delta_span=np.zeros((len(items), 2), np.int64),
    )
    if rows.packed and dim % 64 == 0:
        index.mean, index.spread = _moments(rows)
        index.sketch = _sketch_rows(rows, index.mean)
    return index


def _spans(item_of: np.ndarray, n_items: int) -> np.ndarray:
    spans = np.zeros((n_items, 2), np.int64)
    if len(item_of):
        boundaries = np.flatnonzero(np.diff(item_of)) + 1
        starts = np.concatenate([[0], boundaries])
        ends = np.concatenate([boundaries, [len(item_of)]])
        spans[item_of[starts], 0] = starts
        spans[item_of[starts], 1] = ends
    return spans


def update(
    index: OwnerIndex, changed: list[ItemKey], fresh: Rows, fresh_items: list[ItemKey]
) -> OwnerIndex:
    """A new version of ``index`` where the items ``changed`` hold only their rows in ``fresh``
    (whose ``item_of`` indexes ``fresh_items``; an item with no rows there is gone)."""
    for key in [*changed, *fresh_items]:
        if key not in index.position:
            index.position[key] = len(index.items)
            index.items.append(key)
    n = len(index.items)
    positions = np.array([index.position[k] for k in changed], dtype=np.int64)
    main_span = _grown(index.main_span, n)
    dead = index.dead.copy()
    dead[index.main_rows_of(positions[positions < len(index.main_span)])] = True
    main_span[positions] = 0
    # The delta keeps its rows of unchanged items, then the fresh rows.
    keep = ~np.isin(index.delta.item_of, positions)
    fresh = replace(
        fresh,
        item_of=np.array([index.position[k] for k in fresh_items], np.int32)[fresh.item_of]
        if fresh.size
        else fresh.item_of,
    )
    delta = concat([index.delta.take(keep), fresh]) if index.delta.size else fresh
    if not delta.size:
        delta = empty_rows(index.dim or fresh.codes.shape[1])
    out = replace(
        index,
        main_span=main_span,
        dead=dead,
        delta=delta,
        delta_span=_spans(delta.item_of, n) if delta.size else np.zeros((n, 2), np.int64),
        _by_type={},
    )
    if delta.size > max(DELTA_ROWS, index.main.size // 8) or dead.sum() > index.main.size // 4:
        out = compact(out)
    return out


def _grown(spans: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n, 2), np.int64)
    out[: len(spans)] = spans
    return out


def compact(index: OwnerIndex) -> OwnerIndex:
    """Main's live rows then the delta's, as one new main (in memory: no storage read). Keeps
    main's mean and spread: the sketch of the rows already there does not change."""
    live = np.flatnonzero(~index.dead)
    delta = index.delta
    total = len(live) + delta.size
    packed = index.main.packed or total > EXACT_ROWS
    if packed and not index.main.packed:
        return build(index.model, concat([index.main.take(live), delta]), index.items)
    if packed:
        delta = pack_rows(delta)
    main = concat([index.main.take(live), delta])
    # Rows of an item stay contiguous: an item lives either in main's live rows or in the delta.
    order = np.argsort(main.item_of, kind="stable")
    main = main.take(order)
    out = replace(
        index,
        main=main,
        delta=empty_rows(index.dim),
        dead=np.zeros(main.size, bool),
        main_span=_spans(main.item_of, len(index.items)),
        delta_span=np.zeros((len(index.items), 2), np.int64),
        _by_type={},
    )
    if index.sketch is not None and index.mean is not None:
        fresh = _sketch_rows(delta, index.mean) if delta.size else index.sketch[:0]
        out.sketch = np.concatenate([index.sketch[live], fresh])[order]
    return out


#: A byte's two 4-bit codes as float32 (high nibble first): codes 1..15 stand for -7..7.
_NIBBLES = (
    np.stack(np.divmod(np.arange(256), 16), axis=1).astype(np.float32) - 8
)  # fmt: skip


def pack(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows (k, dim) as 4-bit codes (k, dim / 2) and the factor (k,) that rescales each row
    (its largest magnitude maps to 7)."""
    peak = np.abs(block).max(axis=1).astype(np.float32) if len(block) else np.zeros(0, np.float32)
    peak[peak == 0] = 1
    codes = (np.rint(block * (7 / peak)[:, None]) + 8).astype(np.uint8)
    return (codes[:, 0::2] << 4) | codes[:, 1::2], peak / 7


def pack_rows(rows: Rows) -> Rows:
    """int8 rows as 4-bit rows, a block at a time (bounded temporaries)."""
    if rows.packed:
        return rows
    parts, factors = [], []
    for s in range(0, rows.size, BLOCK):
        codes, factor = pack(rows.codes[s : s + BLOCK])
        parts.append(codes)
        factors.append(factor)
    dim = rows.codes.shape[1]
    return replace(
        rows,
        codes=np.concatenate(parts) if parts else np.zeros((0, dim // 2), np.uint8),
        scales=rows.scales * (np.concatenate(factors) if factors else 1),
        packed=True,
    )


def return_freed_memory() -> None:
    """Hand the heap a build freed (database rows, fetch buffers: tens of MB for a large index)
    back to the operating system. glibc only; elsewhere a no-op."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _moments(rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    dim = rows.codes.shape[1] * (2 if rows.packed else 1)
    total = np.zeros(dim, dtype=np.float64)
    for s in range(0, rows.size, BLOCK):
        total += rows.rows(slice(s, s + BLOCK)).sum(axis=0, dtype=np.float64)
    mean = (total / max(rows.size, 1)).astype(np.float32)
    spread = np.zeros(dim, dtype=np.float64)
    for s in range(0, rows.size, BLOCK):
        spread += np.abs(rows.rows(slice(s, s + BLOCK)) - mean).sum(axis=0, dtype=np.float64)
    return mean, (spread / max(rows.size, 1)).astype(np.float32)


def _sketch_rows(rows: Rows, mean: np.ndarray) -> np.ndarray:
    parts = [
        np.packbits(rows.rows(slice(s, s + BLOCK)) > mean, axis=1)
        for s in range(0, rows.size, BLOCK)
    ]
    if not parts:
        return np.zeros((0, len(mean) // 64), np.uint64)
    return np.ascontiguousarray(np.concatenate(parts)).view(np.uint64)


def _sketch_distance(index: OwnerIndex, query: np.ndarray) -> np.ndarray:
    """Weighted disagreement of each main row's sketch with the query's signs: a dimension
    counts by |query| times its spread (0-3: its quartile of that weight), an estimate of how far
    the row's cosine falls below the best. The weights' two bits are two bit planes: one XOR,
    then a masked popcount per plane, ``BLOCK`` rows at a time into reused buffers that stay in
    the CPU's cache (~6x faster than three levels masked apart over the whole sketch)."""
    assert index.sketch is not None
    assert index.spread is not None
    bits = np.packbits(query > 0).view(np.uint64)
    weight = np.abs(query) * index.spread
    level = np.searchsorted(np.quantile(weight, [0.25, 0.5, 0.75]), weight, side="left")
    planes = [np.packbits((level >> plane) & 1).view(np.uint64) for plane in (0, 1)]
    rows, words = index.sketch.shape
    distance = np.empty(rows, np.uint32)
    differ = np.empty((BLOCK, words), np.uint64)
    masked = np.empty((BLOCK, words), np.uint64)
    counts = np.empty((BLOCK, words), np.uint8)
    for s in range(0, rows, BLOCK):
        k = min(BLOCK, rows - s)
        np.bitwise_xor(index.sketch[s : s + k], bits, out=differ[:k])
        total = np.zeros(k, np.uint32)
        for plane, mask in enumerate(planes):
            np.bitwise_and(differ[:k], mask, out=masked[:k])
            np.bitwise_count(masked[:k], out=counts[:k])
            if words == 4:
                # The four counts (a plane masks half the bits: their sum <= 128 fits a byte)
                # summed as the top byte of their uint32 times 0x01010101.
                summed = (counts[:k].view(np.uint32).ravel() * np.uint32(0x01010101)) >> 24
            else:
                summed = counts[:k].sum(axis=1, dtype=np.uint32)
            total += summed.astype(np.uint32) << plane
        distance[s : s + k] = total
    return distance


FAR = np.iinfo(np.uint32).max  # a sketch distance that leaves a row out


def chunk_ranking(
    index: OwnerIndex, query: np.ndarray, allowed: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Candidate chunk rows (main's numbers, then the delta's after them) and their cosine, best
    first. ``allowed``: a bool per item position; only those items' rows are ranked."""
    if index.size == 0 or index.dim != len(query):
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    main = index.main
    rows: np.ndarray | None = None
    exact = index.sketch is None
    if allowed is not None:
        spans = index.main_span[: len(allowed)]
        exact = exact or int((spans[:, 1] - spans[:, 0])[allowed].sum()) <= EXACT_ROWS
        if exact:
            rows = index.main_rows_of(np.flatnonzero(allowed))
    if exact:
        if rows is None:
            scores = main.cosines(query)
            scores[index.dead] = -np.inf
            rows = np.arange(main.size)
        else:
            scores = main.cosines(query, rows) if len(rows) else np.zeros(0, np.float32)
    else:
        distance = _sketch_distance(index, query)
        distance[index.dead] = FAR
        if allowed is not None:
            distance[index.main_rows_of(np.flatnonzero(~allowed))] = FAR
        live = int((distance < FAR).sum())
        keep = min(RERANK, live)
        # In storage order: the codes are read front to back (a third of the time).
        rows = np.sort(np.argpartition(distance, keep - 1)[:keep]) if keep else np.zeros(0, int)
        scores = main.cosines(query, rows)
    delta = index.delta
    if delta.size:
        extra = delta.cosines(query)
        delta_rows = np.arange(delta.size)
        if allowed is not None:
            passing = allowed[delta.item_of]
            extra, delta_rows = extra[passing], delta_rows[passing]
        rows = np.concatenate([rows, delta_rows + main.size])
        scores = np.concatenate([scores, extra])
    order = np.argsort(-scores, kind="stable")
    order = order[np.isfinite(scores[order])]
    return rows[order], scores[order]


def iter_item_ranking(
    index: OwnerIndex,
    query: np.ndarray,
    allowed: np.ndarray | None = None,
    exact: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Iterator[ChunkHit]:
    """Items best first, each with its best chunk (ties: the earlier chunk), built lazily: a
    caller that needs the best 100 items of 10 000 makes 100-odd ``ChunkHit`` objects.
    ``exact``: the int8 cosines of chunk ids (from storage); a packed index's best ``RESCORE``
    rows are scored with it, so 4-bit rounding (about 0.01) does not reorder the top."""
    rows, scores = chunk_ranking(index, query, allowed)
    if not len(rows):
        return
    if exact is not None and index.main.packed:
        top = min(RESCORE, len(rows))
        scores = scores.copy()
        scores[:top] = exact(index.gather("chunk_id", rows[:top]))
        order = np.argsort(-scores[:top], kind="stable")
        rows = np.concatenate([rows[:top][order], rows[top:]])
        scores = np.concatenate([scores[:top][order], scores[top:]])
    items = index.gather("item_of", rows)
    _, first = np.unique(items, return_index=True)
    first.sort()
    picked = rows[first]
    fields = index.gather("field", picked)
    starts = index.gather("start_line", picked)
    ends = index.gather("end_line", picked)
    chars = index.gather("start_char", picked)
    ids = index.gather("chunk_id", picked)
    for i, pos in enumerate(first.tolist()):
        item_type, item_id = index.items[int(items[pos])]
        yield ChunkHit(
            item_type=item_type,
            item_id=item_id,
            score=float(scores[pos]),
            field=FIELDS[int(fields[i])],
            start_line=int(starts[i]) or None,
            end_line=int(ends[i]) or None,
            start_char=int(chars[i]),
            chunk_id=int(ids[i]),
        )


def item_vector(index: OwnerIndex, key: ItemKey) -> np.ndarray | None:
    """The mean of an item's chunk vectors (normalised), or None when it is not indexed."""
    position = index.position.get(key)
    if position is None or position >= len(index.main_span):
        return None
    start, end = index.delta_span[position]
    if end > start:
        block = index.delta.rows(slice(start, end)) * index.delta.scales[start:end, None]
    else:
        start, end = index.main_span[position]
        if end <= start:
            return None
        block = index.main.rows(slice(start, end)) * index.main.scales[start:end, None]
    mean = block.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else None
