"""Version numbers stay dense and unique under concurrent writes (PostgreSQL row locks).

Real threads, each with its own connection. SQLite serialises writers for the whole file, so the
interesting interleavings only exist on PostgreSQL; CI runs both databases.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from content import history, services
from content.history import Actor
from content.tests.editing_support import in_threads
from content.tests.history_support import current, make_note, numbers, ref, rows

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-lock interleavings need PostgreSQL"
    ),
]


def test_ten_threads_editing_one_note_give_versions_1_to_11(owner: Any) -> None:
    markers = [f"<spot {i}>" for i in range(10)]
    original = "\n".join(f"line {m}" for m in markers)
    note = make_note(owner, original)

    def work(index: int) -> None:
        services.edit_content(
            owner=owner,
            ref=ref(note),
            old_str=markers[index],
            new_str=f"[edit {index}]",
            actor=Actor(source=f"thread-{index}"),
        )

    assert in_threads(10, work) == [None] * 10
    assert numbers(note) == list(range(1, 12))
    # Each version is its predecessor plus exactly one more edit, in commit order.
    edited: set[int] = set()
    for row in rows(note)[1:]:
        edited.add(int(row.source.removeprefix("thread-")))
        expected = original
        for index in edited:
            expected = expected.replace(markers[index], f"[edit {index}]")
        assert history.reconstruct(note, row.version or 0) == expected
    assert history.reconstruct(note, 1) == original
    assert history.reconstruct(note, 11) == current(note)


def test_mixed_concurrent_writes_and_reads_keep_numbers_dense(owner: Any) -> None:
    markers = [f"<spot {i}>" for i in range(6)]
    note = make_note(owner, "\n".join(markers))

    def work(index: int) -> Any:
        if index < 6:
            return services.edit_content(
                owner=owner, ref=ref(note), old_str=markers[index], new_str="x", actor=Actor()
            ).changed
        if index < 10:
            services.update_item(
                owner=owner, ref=ref(note), data={"title": f"title {index}"}, actor=Actor()
            )
            return True
        return history.reconstruct(note, 1)  # readers see a consistent chain meanwhile

    results = in_threads(12, work)
    assert results[:10] == [True] * 10
    assert results[10:] == ["\n".join(markers)] * 2
    assert numbers(note) == list(range(1, 12))
