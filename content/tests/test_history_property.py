"""Property: after any sequence of edits, every kept version reconstructs byte for byte."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from content import history, services
from content.history import Actor
from content.tests.history_support import current, edit, make_note, numbers, ref, update
from tiddly.errors import TiddlyError

pytestmark = pytest.mark.django_db

# Few distinct characters make repeated and whitespace-normalised matches likely; the rest
# (CRLF, astral, combining) must survive byte for byte.
texts = st.text(alphabet="ab \n\t\ré😀\u0301", max_size=40)
operations = st.one_of(
    st.tuples(st.just("str_replace"), st.integers(0, 60), st.integers(1, 6), texts),
    st.tuples(st.just("patch"), st.none() | texts),
    st.tuples(st.just("title"), st.text(alphabet="xyz", min_size=1, max_size=5)),
    st.tuples(st.just("restore"), st.integers(1, 30)),
)


def apply(owner: Any, note: Any, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "str_replace":
        _, start, length, new_str = op
        text = current(note) or ""
        old_str = text[start : start + length]
        if old_str:
            edit(owner, note, old_str, new_str)
    elif kind == "patch":
        update(owner, note, content=op[1])
    elif kind == "title":
        update(owner, note, title=op[1])
    else:
        kept = numbers(note)
        target = kept[op[1] % len(kept)]
        services.restore_version(owner=owner, ref=ref(note), version=target or 0, actor=Actor())


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    first=st.none() | texts,
    ops=st.lists(operations, min_size=1, max_size=14),
    snapshot_every=st.sampled_from([2, 3, 200]),
    max_versions=st.sampled_from([4, 100]),
)
def test_every_kept_version_reconstructs_exactly(
    owner: Any, first: str | None, ops: list[Any], snapshot_every: int, max_versions: int
) -> None:
    with override_settings(
        TIDDLY_HISTORY_SNAPSHOT_EVERY=snapshot_every, TIDDLY_HISTORY_MAX_VERSIONS=max_versions
    ):
        note = make_note(owner, first)
        expected: dict[int, str | None] = {1: first}
        for op in ops:
            # No match, several matches, content empty, the current version: all fine.
            with contextlib.suppress(TiddlyError):
                apply(owner, note, op)
            expected[history.latest_version(note)] = current(note)

        kept = numbers(note)
        assert kept == list(range(kept[0] or 0, len(expected) + 1))
        for number in kept:
            assert history.reconstruct(note, number or 0) == expected[number or 0]
            pair = history.reconstruct_with_previous(note, number or 0)
            assert pair.content == expected[number or 0]
            if number and number > 1 and number - 1 in kept:
                assert pair.previous == expected[number - 1]
