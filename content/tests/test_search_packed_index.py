"""A large index is held as 4-bit codes with a sign sketch (content.search.semantic): it must
rank as the exact int8 index does, in half its memory."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from content.search import semantic
from content.search.embeddings import provider
from content.tests.search_corpus import NOTES, QUERIES
from content.tests.search_support import _fresh_index, index, make_note, search  # noqa: F401

pytestmark = pytest.mark.django_db


def test_four_bit_codes_keep_each_row_s_direction() -> None:
    rng = np.random.default_rng(3)
    rows = rng.integers(-127, 128, size=(500, 256)).astype(np.int8)
    codes, factor = semantic.pack(rows)
    assert codes.dtype == np.uint8
    assert codes.shape == (500, 128)
    decoded = semantic._NIBBLES[codes].reshape(500, 256) * factor[:, None]
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
    assert not exact.packed
    assert exact.sketch is None

    monkeypatch.setattr(semantic, "EXACT_ROWS", 0)  # every index is "large"
    monkeypatch.setattr(semantic, "RERANK", max(exact.size // 2, 1))  # the sketch must choose
    semantic.clear()
    packed = semantic.owner_index(owner.pk, embedder.model)
    assert packed.packed
    assert packed.sketch is not None
    assert packed.codes.nbytes * 2 == exact.codes.nbytes
    assert list(packed.chunk_id) == list(exact.chunk_id)

    same = 0
    for query, _ in QUERIES:
        vector = embedder.embed([query])[0]
        best = [(h.item_type, h.item_id) for h in semantic.item_ranking(exact, vector)][:1]
        near = [(h.item_type, h.item_id) for h in semantic.item_ranking(packed, vector)][:3]
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
    codes, factor = semantic.pack(rng.integers(-127, 128, size=(64, 256)).astype(np.int8))
    index = semantic.OwnerIndex(
        generation=0,
        model="m",
        codes=codes,
        scales=factor,
        item_of=np.zeros(64, np.int32),
        field=np.zeros(64, np.int8),
        start_line=np.zeros(64, np.int32),
        end_line=np.zeros(64, np.int32),
        start_char=np.zeros(64, np.int64),
        chunk_id=np.arange(64, dtype=np.int64),
        items=[("note", 1)],
        packed=True,
    )
    query = rng.standard_normal(256).astype(np.float32)
    rows = np.array([3, 17, 40])
    np.testing.assert_allclose(index.dot(rows, query), index.rows(rows) @ query, rtol=1e-4)
    np.testing.assert_allclose(
        semantic._exact(index, query), (index.rows(slice(None)) @ query) * factor, rtol=1e-4
    )
