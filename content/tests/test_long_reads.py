"""The queries that fetch a whole content note a long one for the web process's turns
(``tiddly.memory.note_read``, ``tiddly.middleware``)."""

from __future__ import annotations

from typing import Any

import pytest

from content.models import Note
from content.queries import items as item_queries
from content.queries.items import ItemRef
from tiddly.memory import LONG_READ_CHARS, took_long_read

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("chars", "noted"), [(100, False), (LONG_READ_CHARS, True)])
def test_reading_a_note_whole_or_in_part_notes_a_long_content(
    owner: Any, chars: int, noted: bool
) -> None:
    note = Note.objects.create(owner=owner, title="t", content="y" * chars)
    ref = ItemRef(Note, note.pk)
    took_long_read()
    assert item_queries.get_owned(owner, ref).content == "y" * chars
    assert took_long_read() is noted
    item, piece = item_queries.get_owned_slice(owner, ref, 0, 50)
    assert item.pk == note.pk
    assert took_long_read() is (noted and piece is None)
