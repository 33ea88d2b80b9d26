"""A task worker keeps its memory flat as the web process does: large buffers are mmaps that go
back to the OS (content.tests.test_search_indexing: an indexing run hands its freed heap back)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command

from tiddly import memory


@pytest.mark.django_db
def test_the_worker_command_tunes_malloc_as_the_web_process_does(monkeypatch: Any) -> None:
    from tiddly.management.commands import worker

    tuned: list[bool] = []
    monkeypatch.setattr(worker, "tune_malloc", lambda: tuned.append(True) or True)
    call_command("worker", "--once")
    assert tuned == [True]


def test_release_memory_answers_whether_it_could() -> None:
    assert isinstance(memory.release_memory(), bool)
