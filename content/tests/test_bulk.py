"""``content.bulk``: rows inserted in bulk read back as the ORM would have written them."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from content import bulk
from content.models.search import SearchChunk

pytestmark = pytest.mark.django_db


def _chunk(owner: Any, item_id: uuid.UUID, seq: int) -> SearchChunk:
    return SearchChunk(
        owner=owner,
        item_type="note",
        item_id=item_id,
        seq=seq,
        field="content",
        start_line=seq * 10 + 1,
        end_line=seq * 10 + 10,
        start_char=seq * 600,
        preview=f"chunk {seq} é😀",
        model="m",
        text_hash=f"{seq:032x}",
        vector=bytes([seq % 256, 255, 0, 7]),
        scale=0.5 + seq,
    )


FIELDS = (
    "owner_id", "item_type", "item_id", "seq", "field", "start_line", "end_line", "start_char",
    "preview", "model", "text_hash", "vector", "scale",
)  # fmt: skip


def _rows(item_id: uuid.UUID) -> list[tuple[Any, ...]]:
    rows = SearchChunk.objects.filter(item_id=item_id).order_by("seq").values_list(*FIELDS)
    return [(*row[:11], bytes(row[11]), row[12]) for row in rows]


def test_auto_numbered_rows_read_back_as_the_orm_writes_them(owner: Any) -> None:
    by_orm, by_bulk = uuid.uuid4(), uuid.uuid4()
    SearchChunk.objects.bulk_create([_chunk(owner, by_orm, seq) for seq in range(3)])
    bulk.insert_objects(SearchChunk, [_chunk(owner, by_bulk, seq) for seq in range(3)])
    expected = [(owner.pk, "note", by_bulk, *row[3:]) for row in _rows(by_orm)]
    assert len(expected) == 3
    assert _rows(by_bulk) == expected
    numbers = list(SearchChunk.objects.filter(item_id=by_bulk).values_list("pk", flat=True))
    assert len(set(numbers)) == 3
    assert None not in numbers


def test_nothing_to_insert_writes_nothing(owner: Any) -> None:
    bulk.insert_objects(SearchChunk, [])
    assert not SearchChunk.objects.exists()
