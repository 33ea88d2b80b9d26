"""The web process's malloc settings (tiddly.memory): large buffers come from the heap, and the
heap's free pages go back to the OS once it holds more than a limit free."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tiddly import memory

MB = 1024 * 1024


def _rss() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096


@pytest.fixture
def glibc() -> None:
    if memory.free_heap_bytes() is None:
        pytest.skip("needs glibc 2.33+ (mallinfo2); CI runs on it")


@pytest.fixture
def heap_threshold() -> Iterator[None]:
    memory.tune_malloc(threshold=memory.HEAP_THRESHOLD)
    yield
    # glibc cannot go back to its moving threshold; the task worker's setting is the nearest.
    memory.tune_malloc(threshold=memory.MMAP_THRESHOLD)


def test_free_heap_beyond_the_limit_goes_back_to_the_os(glibc: None, heap_threshold: None) -> None:
    # Blocks below the threshold come from the heap; a block between them keeps the freed
    # ones from being the heap's top (which glibc would trim on its own).
    blocks = [
        (ctypes.create_string_buffer(4 * MB), ctypes.create_string_buffer(64)) for _ in range(12)
    ]
    for big, _ in blocks:
        ctypes.memset(big, 1, 4 * MB)
    held = _rss()
    keep = [small for _, small in blocks]
    del blocks
    assert memory.free_heap_bytes() > 40 * MB
    assert memory.give_back_heap(limit=40 * MB * 10) is False  # within the limit: kept
    assert memory.give_back_heap(limit=16 * MB) is True
    assert _rss() < held - 30 * MB
    del keep  # the small blocks lived until the trim


@dataclass
class FakeHeap:
    """glibc's free-byte count and clock, set by the test; ``released`` records each release."""

    free: int = 64 * MB
    now: float = 1000.0
    released: list[int] = field(default_factory=list)


@pytest.fixture
def heap(monkeypatch: pytest.MonkeyPatch) -> FakeHeap:
    fake = FakeHeap()

    def release() -> bool:
        fake.released.append(fake.free)  # glibc goes on counting the pages it was given as free
        return True

    monkeypatch.setattr(memory, "free_heap_bytes", lambda: fake.free)
    monkeypatch.setattr(memory, "release_memory", release)
    monkeypatch.setattr(memory, "_monotonic", lambda: fake.now)
    monkeypatch.setattr(memory, "_free_after_release", 0)
    monkeypatch.setattr(memory, "_released_at", -1e9)
    return fake


def test_after_small_requests_only_newly_freed_heap_goes_back(heap: FakeHeap) -> None:
    assert memory.give_back_heap(16 * MB, only_new=True) is True
    assert memory.give_back_heap(16 * MB, only_new=True) is False  # the same pages again
    heap.free = 70 * MB
    assert memory.give_back_heap(16 * MB, only_new=True) is False  # 6 MB freed since
    heap.free = 90 * MB
    assert memory.give_back_heap(16 * MB, only_new=True) is True  # 26 MB freed since
    heap.free = 20 * MB  # a request reused most of it
    assert memory.give_back_heap(16 * MB, only_new=True) is False
    heap.free = 40 * MB  # 20 MB beyond the least it held
    assert memory.give_back_heap(16 * MB, only_new=True) is True
    assert heap.released == [64 * MB, 90 * MB, 40 * MB]


def test_counted_from_zero_what_was_handed_back_goes_again_at_most_every_so_often(
    heap: FakeHeap,
) -> None:
    assert memory.give_back_heap(16 * MB, every=0.5) is True  # counted from zero
    heap.now += 0.1
    assert memory.give_back_heap(16 * MB, every=0.5) is False  # the same pages, just given back
    assert memory.give_back_heap(16 * MB) is True  # without a pause (a large body): again
    heap.free = 76 * MB
    assert memory.give_back_heap(16 * MB, every=0.5) is False  # 12 MB new: within the limit
    heap.free = 84 * MB
    assert memory.give_back_heap(16 * MB, every=0.5) is True  # 20 MB new: at once
    heap.now += 0.5
    assert memory.give_back_heap(16 * MB, every=0.5) is True  # from zero again, its time came
    heap.free = 10 * MB
    heap.now += 0.5
    assert memory.give_back_heap(16 * MB, every=0.5) is False  # within the limit from zero too
    assert heap.released == [64 * MB, 64 * MB, 84 * MB, 84 * MB]


def test_nothing_is_given_back_within_the_limit(glibc: None) -> None:
    assert memory.give_back_heap(limit=1 << 62) is False


@pytest.mark.parametrize(
    ("engine", "threshold"),
    [
        ("tiddly.sqlite", memory.HEAP_THRESHOLD),
        ("django.db.backends.sqlite3", memory.HEAP_THRESHOLD),
        ("django.db.backends.postgresql", memory.MMAP_THRESHOLD),
    ],
)
def test_the_web_process_keeps_large_buffers_on_the_heap_on_sqlite_only(
    engine: str, threshold: int
) -> None:
    assert memory.web_threshold(engine) == threshold


def test_a_read_of_a_long_content_is_noted_until_taken() -> None:
    memory.took_long_read()
    memory.note_read(None)
    memory.note_read("x" * (memory.LONG_READ_CHARS - 1))
    assert memory.took_long_read() is False
    memory.note_read("x" * memory.LONG_READ_CHARS)
    assert memory.took_long_read() is True
    assert memory.took_long_read() is False  # taken: cleared
