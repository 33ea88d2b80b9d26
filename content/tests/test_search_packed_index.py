"""A large index is held as 4-bit codes with a sign sketch (content.search.semantic): it must
rank as the exact int8 index does, in half its memory."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from content.search import semantic, vectors
from content.search.embeddings import provider
from content.tests.search_corpus import NOTES, QUERIES
from content.tests.search_support import _fresh_index, index, make_note, search  # noqa: F401

pytestmark = pytest.mark.django_db


def test_four_bit_codes_keep_each_row_s_direction() -> None:
    rng = np.random.default_rng(3)
    rows = rng.integers(-127, 128, size=(500, 256)).astype(np.int8)
    codes, factor = vectors.pack(rows)
    assert codes.dtype == np.uint8
    assert codes.shape == (500, 128)
    decoded = vectors._NIBBLES[codes].reshape(500, 256) * factor[:, None]
    original = rows.astype(np.float32)
    cosine = (decoded * original).sum(axis=1) / (
        np.linalg.norm(decoded, axis=1) * np.linalg.norm(original, axis=1)
    )
    assert cosine.min() > 0.97, cosine.min()
    # The magnitudes survive too (the factor rescales each row back to its int8 range).
    ratio = np.linalg.norm(decoded, axis=1) / np.linalg.norm(original, axis=1)
    assert np.abs(ratio - 1).max() < 0.05


def test_a_large_index_is_packed_and_ranks_as_the_exact_one(
    api: Any, monkeypatch: Any, owner: Any
) -> None:
    ids = {key: make_note(api, title, content) for key, (title, content) in NOTES.items()}
    index()
    embedder = provider()
    exact = semantic.owner_index(owner.pk, embedder.model)
    assert exact is not None
    assert not exact.packed
    assert exact.sketch is None

    monkeypatch.setattr(vectors, "EXACT_ROWS", 0)  # every index is "large"
    monkeypatch.setattr(vectors, "RERANK", max(exact.size // 2, 1))  # the sketch must choose
    semantic.clear()
    packed = semantic.owner_index(owner.pk, embedder.model)
    assert packed is not None
    assert packed.packed
    assert packed.sketch is not None
    assert packed.main.codes.nbytes * 2 == exact.main.codes.nbytes
    assert list(packed.main.chunk_id) == list(exact.main.chunk_id)

    same = 0
    for query, _ in QUERIES:
        vector = embedder.embed([query])[0]
        best = [(h.item_type, h.item_id) for h in vectors.iter_item_ranking(exact, vector)][:1]
        near = [(h.item_type, h.item_id) for h in vectors.iter_item_ranking(packed, vector)][:3]
        same += best[0] in near
    assert same == len(QUERIES)
    # And through the API, the paraphrases are still found.
    hits = sum(
        ids[target] in [r["id"] for r in search(api, query, mode="semantic", limit=3)["results"]]
        for query, target in QUERIES
    )
    assert hits / len(QUERIES) >= 0.7


def test_packed_products_equal_the_unpacked_ones() -> None:
    rng = np.random.default_rng(5)
    codes, factor = vectors.pack(rng.integers(-127, 128, size=(64, 256)).astype(np.int8))
    rows = vectors.Rows(
        codes=codes,
        scales=factor,
        item_of=np.zeros(64, np.int32),
        field=np.zeros(64, np.int8),
        start_line=np.zeros(64, np.int32),
        end_line=np.zeros(64, np.int32),
        start_char=np.zeros(64, np.int64),
        chunk_id=np.arange(64, dtype=np.int64),
        packed=True,
    )
    query = rng.standard_normal(256).astype(np.float32)
    which = np.array([3, 17, 40])
    np.testing.assert_allclose(rows.dot(which, query), rows.rows(which) @ query, rtol=1e-4)
    np.testing.assert_allclose(
        rows.cosines(query), (rows.rows(slice(None)) @ query) * factor, rtol=1e-4
    )
