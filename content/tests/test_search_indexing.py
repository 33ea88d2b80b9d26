"""The indexer's batches (SPEC §16): no transaction while embedding, bounded batches, and a row
another worker finished meanwhile left as that worker wrote it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.db import connection

from content.models.search import SearchChunk, SearchDirty
from content.search import embeddings
from content.search import indexing as search_index
from content.tests.search_support import _fresh_index, make_note  # noqa: F401


class _Watched:
    """The local provider, recording whether a transaction was open at each call."""

    def __init__(self, on_embed: Any = None) -> None:
        self.inner = embeddings.provider()
        self.model = self.inner.model
        self.in_transaction: list[bool] = []
        self.on_embed = on_embed

    def embed(self, texts: list[str]) -> np.ndarray:
        self.in_transaction.append(connection.in_atomic_block)
        if self.on_embed is not None:
            self.on_embed()
        return self.inner.embed(texts)


@pytest.mark.django_db(transaction=True)
def test_embedding_runs_outside_any_transaction(api: Any, monkeypatch: Any) -> None:
    note = make_note(api, "Kubernetes node maintenance", "drain\n" * 50)
    watched = _Watched()
    monkeypatch.setattr(search_index, "provider", lambda: watched)
    report = search_index.index_pending()
    assert report.items == 1
    assert watched.in_transaction == [False]  # a transaction held while embedding blocks writers
    assert SearchChunk.objects.filter(item_id=note).exists()
    assert not SearchDirty.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_new_rows_are_worked_out_before_the_write_transaction(
    api: Any, monkeypatch: Any
) -> None:
    # The worker runs at a low CPU priority: whatever it does holding SQLite's write lock, the
    # web's writes wait for. Only the deletes and inserts themselves are left inside.
    note = make_note(api, "Runbook", "\n\n".join(f"step {n} " + "x" * 900 for n in range(40)))
    search_index.index_pending()
    api.patch(f"/api/notes/{note}/", {"content": "step 0 changed"}, format="json")
    planned: list[bool] = []
    plan = search_index._plan

    def watched(*args: Any) -> Any:
        planned.append(connection.in_atomic_block)
        return plan(*args)

    monkeypatch.setattr(search_index, "_plan", watched)
    report = search_index.index_pending()
    assert planned == [False]
    assert report.items == 1
    assert report.removed > 0
    assert report.written == 1
    assert SearchChunk.objects.filter(item_id=note).count() == 2  # the head and one chunk


@pytest.mark.django_db
def test_a_batch_stops_at_its_character_budget(api: Any, settings: Any) -> None:
    for n in range(3):
        make_note(api, f"Note {n}", "x" * 3_000)
    settings.TIDDLY_EMBEDDINGS_BATCH_CHARS = 5_000
    batches: list[int] = []
    report = search_index.index_pending(progress=batches.append)
    assert report.items == 3
    assert batches == [1, 1, 1]  # each item alone: two would pass 5 000 characters
    settings.TIDDLY_EMBEDDINGS_BATCH_CHARS = 1_000_000
    SearchDirty.objects.all().delete()
    for n in range(3):
        make_note(api, f"More {n}", "y" * 3_000)
    batches.clear()
    search_index.index_pending(progress=batches.append)
    assert batches == [3]


@pytest.mark.django_db
def test_an_item_another_worker_indexed_meanwhile_is_left_as_it_wrote_it(api: Any) -> None:
    mine = make_note(api, "Sourdough", "bake")
    theirs = make_note(api, "Guitar", "chords")

    def other_worker_finishes_theirs() -> None:
        SearchChunk.objects.create(
            owner_id=SearchDirty.objects.get(item_id=theirs).owner_id,
            item_type="note",
            item_id=theirs,
            seq=0,
            field="header",
            model="other-worker",
            vector=b"\0" * 256,
            scale=1.0,
        )
        SearchDirty.objects.filter(item_id=theirs).delete()

    watched = _Watched(on_embed=other_worker_finishes_theirs)
    report = search_index._index_batch(watched, None, 64, search_index.IndexReport())
    assert report == 2  # both rows were read
    assert set(SearchChunk.objects.filter(item_id=theirs).values_list("model", flat=True)) == {
        "other-worker"
    }
    assert SearchChunk.objects.filter(item_id=mine, model=watched.model).exists()
    assert not SearchDirty.objects.exists()


@pytest.mark.django_db
def test_writes_only_mark_and_the_poller_queues_one_run(api: Any) -> None:
    from django_tasks_db.models import DBTaskResult

    runs = DBTaskResult.objects.filter(task_path=search_index.index_task.module_path)
    runs.delete()
    for n in range(5):
        make_note(api, f"Note {n}", "text")
    assert runs.count() == 0  # no queue row per write
    assert SearchDirty.objects.count() == 5
    search_index.poll_marks()
    search_index.poll_marks()  # one run is queued already: not another
    assert runs.count() == 1
    search_index.index_pending()
    runs.update(status="SUCCESSFUL")
    search_index.poll_marks()  # nothing marked any more: nothing queued
    assert runs.count() == 1


@pytest.mark.django_db
def test_the_poller_waits_for_a_burst_of_writes_then_for_its_first_mark_at_most(
    api: Any, settings: Any, monkeypatch: Any
) -> None:
    from django_tasks_db.models import DBTaskResult

    settings.TIDDLY_INDEX_QUIET_MS = 60_000
    settings.TIDDLY_INDEX_WAIT_MS = 60_000
    runs = DBTaskResult.objects.filter(task_path=search_index.index_task.module_path)
    runs.delete()
    monkeypatch.setattr(search_index, "_waiting_since", None)
    note = make_note(api, "Burst", "first")
    search_index.poll_marks()
    for n in range(3):  # the agent keeps editing: the marks are never still
        assert (
            api.patch(f"/api/notes/{note}/", {"content": f"edit {n}"}, format="json").status_code
            == 200
        )
        search_index.poll_marks()
    assert runs.count() == 0
    settings.TIDDLY_INDEX_WAIT_MS = 0  # the first mark has waited long enough
    search_index.poll_marks()
    assert runs.count() == 1
    runs.delete()
    settings.TIDDLY_INDEX_WAIT_MS = 60_000
    settings.TIDDLY_INDEX_QUIET_MS = 0  # or the writes have stopped
    search_index.poll_marks()
    assert runs.count() == 1


@pytest.mark.django_db
def test_a_write_behind_queued_captures_is_indexed_before_them(api: Any) -> None:
    from content.models.capture import CaptureStatus, PageCapture
    from tiddly.tasks import QUEUE, run_ready

    for n in range(3):  # a private address: refused at once if the capture ran
        response = api.post("/api/bookmarks/", {"url": f"http://10.0.0.1/{n}"}, format="json")
        assert response.status_code == 201, response.content
    assert PageCapture.objects.filter(status=CaptureStatus.PENDING).count() == 3
    make_note(api, "Written behind the captures", "text")
    # A worker in the middle of its queue: the pollers are called before its next claim.
    assert run_ready(max_tasks=1, queue=QUEUE, poll_every=0) == 1
    assert not SearchDirty.objects.exists()
    assert PageCapture.objects.filter(status=CaptureStatus.PENDING).count() == 3


@pytest.mark.django_db
def test_an_indexing_run_that_indexed_something_gives_the_freed_heap_back(
    monkeypatch: Any,
) -> None:
    released: list[bool] = []
    monkeypatch.setattr(search_index, "release_memory", lambda: released.append(True) or True)
    monkeypatch.setattr(search_index, "index_pending", lambda: search_index.IndexReport(items=1))
    search_index.index_task.call()
    assert released == [True]
    monkeypatch.setattr(search_index, "index_pending", lambda: search_index.IndexReport())
    search_index.index_task.call()
    assert released == [True]  # nothing indexed, nothing to give back


@pytest.mark.django_db(transaction=True)
def test_indexing_gives_way_between_steps_of_at_most_64_texts(api: Any, monkeypatch: Any) -> None:
    # tiddly.giving_way: the web server's worker pauses between steps while the web is busy, so
    # no step may be long (a 100 000-line note is 4 400 chunks).
    make_note(api, "Long", "\n\n".join(f"paragraph {n} " + "word " * 200 for n in range(150)))
    make_note(api, "Short", "one line")
    calls: list[str] = []
    watched = _Watched(on_embed=lambda: calls.append("embed"))
    monkeypatch.setattr(search_index, "provider", lambda: watched)
    monkeypatch.setattr(search_index, "give_way", lambda: calls.append("give way") or 0.0)
    report = search_index.index_pending()
    assert report.items == 2
    assert report.embedded > 128
    embeds = calls.count("embed")
    assert embeds == -(-report.embedded // search_index.EMBED_STEP)  # steps of at most 64 texts
    # Each embedding step comes after a chance to give way, and so does cutting each item.
    assert all(calls[i - 1] == "give way" for i, c in enumerate(calls) if c == "embed")
    assert calls.count("give way") >= embeds + 2


@pytest.mark.django_db
def test_marking_one_item_twice_keeps_one_row_and_moves_its_time(owner: Any) -> None:
    import uuid
    from datetime import timedelta

    from django.utils import timezone

    from content.search import marks

    item_id = uuid.uuid4()
    marks.mark_dirty(owner_id=owner.pk, item_type="note", item_ids=[item_id])
    first = SearchDirty.objects.get(item_id=item_id)
    SearchDirty.objects.filter(pk=first.pk).update(marked_at=timezone.now() - timedelta(hours=1))
    marks.mark_dirty(owner_id=owner.pk, item_type="note", item_ids=[item_id])
    again = SearchDirty.objects.get(item_id=item_id)  # one row: the upsert hit the same one
    assert (again.pk, again.owner_id, again.item_type) == (first.pk, owner.pk, "note")
    assert again.marked_at > timezone.now() - timedelta(minutes=1)
