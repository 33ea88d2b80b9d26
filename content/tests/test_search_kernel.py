"""The ranking kernel of content.search.vectors on synthetic rows: what the sketch distance
counts, and that an item scores as its best chunk (SPEC §16: ``score`` is the best chunk's
cosine), whatever its other chunks."""

from __future__ import annotations

import numpy as np

from content.search import vectors


def _rows(codes: np.ndarray, item_of: np.ndarray) -> vectors.Rows:
    n = len(codes)
    return vectors.Rows(
        codes=codes,
        scales=(1 / np.linalg.norm(codes.astype(np.float32), axis=1)).astype(np.float32),
        item_of=item_of.astype(np.int32),
        field=np.ones(n, np.int8),
        start_line=np.arange(1, n + 1, dtype=np.int32),
        end_line=np.arange(1, n + 1, dtype=np.int32),
        start_char=np.zeros(n, np.int64),
        chunk_id=np.arange(n, dtype=np.int64),
    )


def test_the_sketch_distance_weighs_each_differing_sign_by_its_quartile() -> None:
    rng = np.random.default_rng(5)
    codes = rng.integers(-127, 128, size=(300, 256)).astype(np.int8)
    rows = vectors.pack_rows(_rows(codes, np.arange(300)))
    index = vectors.build("m", rows, [("note", i) for i in range(300)])
    assert index.sketch is not None
    assert index.spread is not None
    query = rng.standard_normal(256).astype(np.float32)
    weight = np.abs(query) * index.spread
    level = (weight[:, None] > np.quantile(weight, [0.25, 0.5, 0.75])[None, :]).sum(axis=1)
    signs = np.unpackbits(index.sketch.view(np.uint8), axis=1).astype(bool)
    expected = ((signs != (query > 0)) * level).sum(axis=1)
    assert list(vectors._sketch_distance(index, query)) == list(expected)


def test_an_item_scores_as_its_best_chunk_among_unrelated_ones() -> None:
    """A short passage in a long note of other lines: the note's score is that passage's chunk's
    cosine, not a mean over the note (which the other 199 chunks would pull to ~0)."""
    rng = np.random.default_rng(8)
    passage = rng.integers(-127, 128, size=256).astype(np.int8)
    long_note = rng.integers(-127, 128, size=(200, 256)).astype(np.int8)
    long_note[150] = passage
    others = rng.integers(-127, 128, size=(50, 256)).astype(np.int8)
    codes = np.concatenate([long_note, others])
    item_of = np.concatenate([np.zeros(200, int), np.arange(1, 51)])
    rows = _rows(codes, item_of)
    index = vectors.build("m", rows, [("note", i) for i in range(51)])
    query = passage.astype(np.float32) / np.linalg.norm(passage.astype(np.float32))
    hits = list(vectors.iter_item_ranking(index, query))
    assert (hits[0].item_type, hits[0].item_id) == ("note", 0)
    assert abs(hits[0].score - 1.0) < 1e-4
    assert hits[0].start_line == 151  # the passage's chunk is the match
    assert len(hits) == 51  # one hit per item
