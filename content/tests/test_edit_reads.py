"""An edit reads the item's content once: the re-read under the row lock takes the unlocked
read's content unless ``updated_at`` moved in between (``services.items.locked_item``). A short
content is read again with the row, in one query."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from content import services
from content.history import Actor
from content.models import Note
from content.services import ItemRef, editing, items
from content.tests.editing_support import make_item

LONG_FILLER = "filler line\n" * (items.KNOWN_CONTENT_CHARS // 12 + 1)

pytestmark = pytest.mark.django_db


def _selects(queries: list[dict[str, str]], naming: str) -> int:
    """How many SELECTs name ``naming``."""
    return sum(
        1 for q in queries if q["sql"].lstrip().upper().startswith("SELECT") and naming in q["sql"]
    )


def _content_reads(queries: list[dict[str, str]]) -> int:
    return _selects(queries, f'"{Note._meta.db_table}"."content"')


def _note_reads(queries: list[dict[str, str]]) -> int:
    return _selects(queries, f'FROM "{Note._meta.db_table}"')


def _edit(owner: Any, note: Note, old: str, new: str) -> Any:
    return services.edit_content(
        owner=owner, ref=ItemRef(Note, pk=note.pk), old_str=old, new_str=new, actor=Actor()
    )


def test_an_edit_of_a_long_content_reads_it_once(owner: Any) -> None:
    note = make_item(owner, "note", content="alpha\n" + LONG_FILLER + "omega\n")
    with CaptureQueriesContext(connection) as ctx:
        _edit(owner, note, "omega", "OMEGA")
    assert _content_reads(ctx.captured_queries) == 1
    note.refresh_from_db()
    assert note.content.startswith("alpha\n")
    assert note.content.endswith("OMEGA\n")


def _another_writer_between_the_reads(owner: Any, note: Note, monkeypatch: Any) -> None:
    real = editing.locked_item

    def then_another_writer(*args: Any, **kwargs: Any) -> Any:
        item = real(*args, **kwargs)
        if kwargs.get("lock") is False:  # the unlocked read: another request writes now
            services.update_item(
                owner=owner,
                ref=ItemRef(Note, pk=note.pk),
                data={"content": note.content + "delta\n"},
                actor=Actor(),
            )
        return item

    monkeypatch.setattr(editing, "locked_item", then_another_writer)


@pytest.mark.parametrize("filler", ["", LONG_FILLER], ids=["short", "long"])
def test_a_write_between_the_two_reads_is_not_lost(
    owner: Any, monkeypatch: Any, filler: str
) -> None:
    note = make_item(owner, "note", content=f"alpha\nbeta\ngamma\n{filler}")
    _another_writer_between_the_reads(owner, note, monkeypatch)
    with CaptureQueriesContext(connection) as ctx:
        outcome = _edit(owner, note, "beta", "BETA")
    note.refresh_from_db()
    assert note.content == f"alpha\nBETA\ngamma\n{filler}delta\n"
    assert outcome.item.content == note.content
    # the unlocked read, the writer's own read, and the content read again under the lock
    assert _content_reads(ctx.captured_queries) == 3
    # a long content's row is first read under the lock without it, to see whether it moved
    assert _note_reads(ctx.captured_queries) == (4 if filler else 3)
