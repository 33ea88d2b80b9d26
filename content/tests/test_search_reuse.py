"""Re-indexing embeds only what changed (SPEC §16 round 4): vectors keyed by the chunk text's hash
and the model, content-defined chunk boundaries, and items that exist when the search migrations
run marked for indexing with no manual step."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from content.models.search import SearchChange, SearchChunk, SearchDirty
from content.search import indexing as search_index
from content.search import marks as search_marks
from content.tests.search_support import _fresh_index, make_note  # noqa: F401
from content.text.chunks import content_chunks

LINES = 100_000


class _Counting:
    """A fake provider: a deterministic vector per text, counting the texts it is asked for."""

    def __init__(self, model: str = "fake/counting-16") -> None:
        self.model = model
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], dtype=np.int8) for t in texts
        ]
        out = np.array(rows, dtype=np.float32) + 0.5
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _line(n: int) -> str:
    # 59 characters, all different, no blank lines or headings: only the anchors cut it.
    return f"{n:06d} " + hashlib.md5(str(n).encode()).hexdigest()[:52]


def _use(monkeypatch: Any, fake: _Counting) -> None:
    monkeypatch.setattr(search_index, "provider", lambda: fake)


def _index(fake: _Counting) -> search_index.IndexReport:
    fake.texts.clear()
    report = search_index.index_pending()
    assert not SearchDirty.objects.exists()
    return report


def _stored(item_id: str) -> list[tuple[Any, ...]]:
    rows = SearchChunk.objects.filter(item_id=item_id).order_by("seq")
    return list(rows.values_list("seq", "start_line", "end_line", "start_char", "text_hash"))


def _changes(owner_id: Any) -> int:
    """Change-log rows: what makes processes update their indexes."""
    return SearchChange.objects.filter(owner_id=owner_id).count()


@pytest.mark.django_db
def test_a_one_line_edit_of_a_large_note_re_embeds_at_most_three_chunks(
    api: Any, monkeypatch: Any
) -> None:
    fake = _Counting()
    _use(monkeypatch, fake)
    lines = [_line(n) for n in range(LINES)]
    note = make_note(api, "Server log", "\n".join(lines))
    first = _index(fake)
    assert first.embedded == first.chunks > 3_000  # the header and every content chunk
    marker = lines[LINES // 2]
    for old, new in [
        (marker, marker + " restic prune ran"),  # a line grows
        (lines[1_234], lines[1_234] + "\nan inserted line"),  # a line is inserted
        (lines[77_777] + "\n", ""),  # a line is deleted
    ]:
        response = api.patch(
            f"/api/notes/{note}/str-replace/", {"old_str": old, "new_str": new}, format="json"
        )
        assert response.status_code == 200, response.content
        report = _index(fake)
        assert report.embedded == len(fake.texts) <= 3, report
        assert report.reused >= report.chunks - 3
        if old == marker:
            assert any("restic prune ran" in t for t in fake.texts)
    # What is stored is exactly a fresh cut of the content, every chunk with its own text's hash.
    content = api.get(f"/api/notes/{note}/").json()["content"]
    fresh = [
        (seq, c.start_line, c.end_line, c.start_char, search_index.text_hash(c.text))
        for seq, c in enumerate(content_chunks(content), start=1)
    ]
    assert _stored(note)[1:] == fresh


@pytest.mark.django_db
def test_an_unchanged_re_index_embeds_and_writes_nothing(api: Any, monkeypatch: Any) -> None:
    fake = _Counting()
    _use(monkeypatch, fake)
    note = make_note(api, "Restic", "\n".join(_line(n) for n in range(500)), tags=["ops"])
    make_note(api, "Other", "short")
    _index(fake)
    before = list(SearchChunk.objects.order_by("pk").values_list("pk", "text_hash"))
    owner_id = SearchChunk.objects.values_list("owner_id", flat=True)[0]
    changes = _changes(owner_id)
    assert search_index.mark_all() == 2
    report = _index(fake)
    assert fake.texts == []
    assert report.embedded == 0
    assert report.reused == report.chunks == len(before)
    assert report.written == report.removed == 0
    assert list(SearchChunk.objects.order_by("pk").values_list("pk", "text_hash")) == before
    assert _changes(owner_id) == changes  # processes keep their index: nothing changed
    # A tag edit changes the header only: one text embedded, the content's vectors kept.
    response = api.patch(f"/api/notes/{note}/", {"tags": ["ops", "backup"]}, format="json")
    assert response.status_code == 200, response.content
    report = _index(fake)
    assert report.embedded == 1
    assert fake.texts == ["Restic\nbackup ops"]
    assert _changes(owner_id) == changes + 1


@pytest.mark.django_db
def test_a_changed_model_re_embeds_every_chunk(api: Any, monkeypatch: Any) -> None:
    fake = _Counting("fake/model-a")
    _use(monkeypatch, fake)
    note = make_note(api, "Restic", "\n".join(_line(n) for n in range(200)))
    first = _index(fake)
    other = _Counting("fake/model-b")
    _use(monkeypatch, other)
    search_index.mark_all()
    report = _index(other)
    assert report.embedded == len(other.texts) == first.chunks == report.chunks
    assert report.reused == 0
    models = SearchChunk.objects.filter(item_id=note).values_list("model", flat=True)
    assert set(models) == {"fake/model-b"}  # the old model's vectors are gone
    assert report.removed == first.chunks


@pytest.mark.django_db
def test_a_permanently_deleted_item_between_mark_and_index_leaves_no_vectors(
    api: Any, monkeypatch: Any
) -> None:
    fake = _Counting()
    _use(monkeypatch, fake)
    note = make_note(api, "Gone", "text")
    _index(fake)
    search_marks.mark_dirty(
        owner_id=SearchChunk.objects.get(field="header").owner_id, item_type="note", item_ids=[note]
    )
    from content.models import Note

    Note.objects.filter(pk=note).delete()  # a delete that bypassed the service's erase
    _index(fake)
    assert not SearchChunk.objects.filter(item_id=note).exists()


@pytest.mark.django_db(transaction=True)
def test_the_migration_marks_items_that_exist_for_indexing(api: Any) -> None:
    note = make_note(api, "Existing before the upgrade", "restic prune")
    SearchDirty.objects.all().delete()  # as if indexed before, or before the search existed
    executor = MigrationExecutor(connection)
    ours = next(k for k in executor.loader.graph.nodes if k[1].endswith("_searchchunk_text_hash"))
    before = [p for p in executor.loader.graph.node_map[ours].parents if p.key[0] == "content"]
    executor.migrate([before[0].key])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    marked = list(SearchDirty.objects.values_list("item_type", "item_id"))
    assert [(t, str(i)) for t, i in marked] == [("note", note)]
    # The poller then queues the run that indexes it.
    from django_tasks_db.models import DBTaskResult

    runs = DBTaskResult.objects.filter(task_path=search_index.index_task.module_path)
    runs.delete()
    search_index.poll_marks()
    assert runs.count() == 1


@pytest.mark.django_db
def test_with_the_provider_off_marks_wait_and_nothing_is_read(
    api: Any, settings: Any, monkeypatch: Any
) -> None:
    from django_tasks_db.models import DBTaskResult

    settings.TIDDLY_EMBEDDINGS = "off"
    make_note(api, "Waits", "\n".join(_line(n) for n in range(1_000)))
    runs = DBTaskResult.objects.filter(task_path=search_index.index_task.module_path)
    runs.delete()
    search_index.poll_marks()
    assert runs.count() == 0  # no run that could only fail
    read: list[Any] = []
    monkeypatch.setattr(search_index, "_chunks_of", lambda rows: read.append(rows) or {})
    assert search_index.index_pending().unavailable
    assert read == []  # no content loaded and cut just to fail
    assert SearchDirty.objects.count() == 1
