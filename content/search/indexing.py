"""Keeping the meaning index current (SPEC §16): writes mark items dirty, one task indexes them.

A write (``content.search.marks``) only upserts a ``SearchDirty`` row in its own
transaction — it never waits for (or fails because of) the provider; the task workers' poller
queues ``index_pending`` when marked rows exist and no run is queued (within about a second). The task indexes every dirty item in batches (bounded in count and in characters): it
cuts the items into chunks and embeds them outside any transaction, then in a short one replaces
each item's old vectors and removes its dirty row (unless the item was marked again
meanwhile, or another worker indexed it first).

Only chunks whose text changed are embedded: a chunk's vector is keyed by a hash of the text that
is embedded (``text_hash``) and the model, so a re-indexed item reuses the vectors its unchanged
chunks already have (the chunker's boundaries are content-defined, so an edit changes only the
chunks near it), and rows whose chunk is unchanged in place are not rewritten at all. A provider that
is down leaves the rows dirty and the task re-enqueues itself with a delay. An item that no
longer exists loses its vectors. ``reindex`` marks everything dirty, so it is resumable by
construction: what is done is no longer dirty.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.db.models.functions import Length
from django.utils import timezone
from django_tasks import task

from content import bulk, item_types
from content.models.search import CHUNK_PREVIEW_CHARS, SearchChunk, SearchDirty
from content.search import marks as search_marks
from content.search.embeddings import OffProvider, ProviderUnavailable, provider
from content.text.chunks import Chunk, embed_text, item_chunks
from tiddly.giving_way import give_way
from tiddly.memory import release_memory
from tiddly.tasks import enqueue, exclusive, is_held, is_queued

log = logging.getLogger(__name__)

# Texts sent to the provider at once: a short step with the local model, between which the web
# server's worker may give way to it (tiddly.giving_way); also bounds memory when one
# 100 000-line note has 4 000 chunks.
EMBED_STEP = 64


# --- the task -----------------------------------------------------------------------------------


# Held by whoever indexes (a worker's task or ``manage.py reindex``): never two at once.
INDEX_LEASE = "search-index"


# Ahead of the captures in the same queue: a write is findable within 10 s (SPEC §16) however
# many pages wait to be fetched.
@task(priority=10)
def index_task() -> None:
    """The queued form of ``index_pending``: idempotent, so running it twice is harmless; skipped
    while someone else indexes (the poller queues it again if marks are left)."""
    with exclusive(INDEX_LEASE) as held:
        if held and index_pending().items:
            release_memory()  # a large note's texts and vectors are freed: give them back


def schedule(delay: float = 0) -> None:
    """Queue the indexing task (in the current transaction; at once outside one)."""
    enqueue(index_task, delay=delay)


#: When this worker process first saw marks waiting (monotonic seconds), None when it saw none.
_waiting_since: float | None = None


def poll_marks() -> None:
    """The task workers' poller (about once a second): queue the indexing when items are marked
    and no run of it is queued or running — once the marks have been still for
    ``TIDDLY_INDEX_QUIET_MS`` or the first has waited ``TIDDLY_INDEX_WAIT_MS``. Writes only mark,
    so they pay no queue row, and a burst of writes is indexed by one run (an item edited many
    times in it, once) while the requests of the burst have the CPU and SQLite's write lock to
    themselves. Nothing is queued while finding by meaning is off (the marks wait for it to be
    on) or while ``reindex`` indexes."""
    global _waiting_since
    if settings.TIDDLY_EMBEDDINGS == "off" or is_held(INDEX_LEASE):
        return
    newest = SearchDirty.objects.aggregate(newest=Max("marked_at"))["newest"]
    if newest is None:
        _waiting_since = None
        return
    now = time.monotonic()
    if _waiting_since is None:
        _waiting_since = now
    still = (timezone.now() - newest).total_seconds() * 1000
    waited = (now - _waiting_since) * 1000
    if still < settings.TIDDLY_INDEX_QUIET_MS and waited < settings.TIDDLY_INDEX_WAIT_MS:
        return
    if not is_queued(index_task):
        schedule()
    _waiting_since = None


# --- indexing -----------------------------------------------------------------------------------


@dataclass
class IndexReport:
    items: int = 0
    chunks: int = 0  # chunks the indexed items hold now
    embedded: int = 0  # texts sent to the provider
    reused: int = 0  # chunks whose vector was already stored (same text hash and model)
    written: int = 0  # chunk rows inserted
    removed: int = 0  # chunk rows deleted
    unavailable: str | None = None
    owners: set[Any] = field(default_factory=set)


def index_pending(
    *,
    owner_id: Any = None,
    max_items: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> IndexReport:
    """Index dirty items (of one owner, or all) until none is left or ``max_items`` are done.

    Idempotent: each batch locks its dirty rows, replaces the items' vectors and deletes only the
    rows it read (unchanged ``marked_at``). A provider that is down stops the run, leaves the rows
    dirty and schedules a retry.
    """
    report = IndexReport()
    embedder = provider()
    if isinstance(embedder, OffProvider):
        # Before reading anything: loading and cutting a batch of contents only to fail costs a
        # 100 000-line note ~0.4 s and ~40 MB.
        report.unavailable = "finding by meaning is off (TIDDLY_EMBEDDINGS=off)"
        return report
    batch = settings.TIDDLY_EMBEDDINGS_BATCH
    while max_items is None or report.items < max_items:
        try:
            done = _index_batch(embedder, owner_id, batch, report)
        except ProviderUnavailable as exc:
            report.unavailable = str(exc)
            log.warning("indexing delayed: %s", exc)
            if settings.TIDDLY_EMBEDDINGS != "off":  # off: nothing to wait for
                schedule(delay=settings.TIDDLY_EMBEDDINGS_RETRY_SECONDS)
            break
        if not done:
            break
        if progress is not None:
            progress(done)
    if report.items:
        log.info(
            "indexed %d items: %d chunks, %d embedded, %d reused, %d rows written, %d removed",
            report.items, report.chunks, report.embedded, report.reused, report.written,
            report.removed,
        )  # fmt: skip
    return report


def _index_batch(embedder: Any, owner_id: Any, batch: int, report: IndexReport) -> int:
    """Index the next dirty items: read and embed them outside any transaction (embedding a
    large note takes seconds: a transaction held that long would block SQLite's writers and hold
    back PostgreSQL's change-feed horizon), then write their vectors in a short one. Returns how
    many dirty rows it took."""
    rows = _next_dirty(owner_id, batch)
    if not rows:
        return 0
    chunks_by_item = _chunks_of(rows)
    texts: dict[str, str] = {}  # text hash -> embedded text, each text once
    digests: dict[tuple[str, Any], list[str]] = {}
    for key, chunks in chunks_by_item.items():
        digests[key] = []
        for chunk in chunks:
            text = embed_text(chunk)
            digests[key].append(digest := text_hash(text))
            texts.setdefault(digest, text)
    known = stored_vectors(list(chunks_by_item), embedder.model, set(texts))
    missing = [h for h in texts if h not in known]
    vectors = _embed(embedder, [texts[h] for h in missing])
    if missing:
        q, scales = quantise(vectors)
        known.update((h, (q[i].tobytes(), float(scales[i]))) for i, h in enumerate(missing))
    report.embedded += len(missing)
    fresh = set(missing)
    report.reused += sum(1 for hashes in digests.values() for h in hashes if h not in fresh)
    plan = _plan(rows, chunks_by_item, digests, known, embedder.model)
    with transaction.atomic():
        _replace(rows, plan, report)
    return len(rows)


def text_hash(text: str) -> str:
    """The key of a chunk's vector (with the model): 128 bits of BLAKE2b of the embedded text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def stored_vectors(
    keys: list[tuple[str, Any]], model: str, wanted: set[str]
) -> dict[str, tuple[bytes, float]]:
    """The stored vectors (int8 bytes, scale) of ``model`` that the items ``keys`` hold for the
    text hashes ``wanted``: what re-indexing them need not embed again."""
    found: dict[str, tuple[bytes, float]] = {}
    by_type: dict[str, list[Any]] = {}
    for type_name, item_id in keys:
        by_type.setdefault(type_name, []).append(item_id)
    for type_name, ids in by_type.items():
        rows = SearchChunk.objects.filter(item_type=type_name, item_id__in=ids, model=model)
        for digest, vector, scale in rows.exclude(text_hash="").values_list(
            "text_hash", "vector", "scale"
        ):
            if digest in wanted:
                found[digest] = (bytes(vector), scale)
    return found


def _next_dirty(owner_id: Any, batch: int) -> list[SearchDirty]:
    """Up to ``batch`` dirty rows, fewer when their items' contents would exceed
    ``TIDDLY_EMBEDDINGS_BATCH_CHARS`` together (always at least one): a batch's texts, chunks and
    vectors are all in memory at once."""
    dirty = SearchDirty.objects.order_by("id")
    if owner_id is not None:
        dirty = dirty.filter(owner_id=owner_id)
    rows = list(dirty[:batch])
    sizes: dict[tuple[str, Any], int] = {}
    for type_name in {row.item_type for row in rows}:
        try:
            model = item_types.model_for(type_name)
        except (KeyError, LookupError):
            continue
        ids = [row.item_id for row in rows if row.item_type == type_name]
        found = model.objects.filter(pk__in=ids).annotate(size=Length("content"))
        sizes.update({(type_name, pk): size for pk, size in found.values_list("pk", "size")})
    budget, total = settings.TIDDLY_EMBEDDINGS_BATCH_CHARS, 0
    for taken, row in enumerate(rows):
        total += sizes.get((row.item_type, row.item_id)) or 0
        if taken and total > budget:
            return rows[:taken]
    return rows


def _chunks_of(rows: list[SearchDirty]) -> dict[tuple[str, Any], list[Chunk]]:
    """Chunks of each still-existing item (a vanished item maps to no entry)."""
    out: dict[tuple[str, Any], list[Chunk]] = {}
    by_type: dict[str, list[Any]] = {}
    for row in rows:
        by_type.setdefault(row.item_type, []).append(row.item_id)
    for type_name, ids in by_type.items():
        try:
            model = item_types.model_for(type_name)
        except (KeyError, LookupError):
            continue
        for item in model.objects.filter(pk__in=ids).prefetch_related("tags"):
            give_way()
            extra = [getattr(item, "url", None)]
            if model.name_field:
                extra.append(getattr(item, model.name_field))
            out[(type_name, item.pk)] = item_chunks(
                title=item.title,
                description=item.description,
                tags=sorted(t.name for t in item.tags.all()),
                extra=extra,
                content=item.content,
            )
    return out


def _embed(embedder: Any, texts: list[str]) -> np.ndarray:
    parts = []
    for i in range(0, len(texts), EMBED_STEP):
        give_way()
        parts.append(embedder.embed(texts[i : i + EMBED_STEP]))
    return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)


def quantise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows scaled to their own largest component, and the scale to undo it."""
    peak = np.abs(vectors).max(axis=1)
    peak[peak == 0] = 1.0
    scale = (peak / 127.0).astype(np.float32)
    q = np.rint(vectors / scale[:, None]).clip(-127, 127).astype(np.int8)
    return q, scale


@dataclass
class _Plan:
    """What indexing a batch changes, item by item, worked out before the write transaction."""

    owner_of: dict[tuple[str, Any], Any]
    new: dict[tuple[str, Any], list[SearchChunk]] = field(default_factory=dict)
    stale: dict[tuple[str, Any], list[int]] = field(default_factory=dict)
    chunks: dict[tuple[str, Any], int] = field(default_factory=dict)


def _plan(
    rows: list[SearchDirty],
    chunks_by_item: dict[tuple[str, Any], list[Chunk]],
    digests: dict[tuple[str, Any], list[str]],
    vectors: dict[str, tuple[bytes, float]],
    model: str,
) -> _Plan:
    """The items' new chunk rows and the old rows that go (``vectors``: by text hash): a row
    whose chunk is unchanged in place (same text hash, model, position) stays as it is. Read and
    built outside any transaction — only one indexer runs at a time (``INDEX_LEASE``), so the
    old rows hold still; for a 100 000-line note this is most of the work, and a worker at a
    low CPU priority that did it holding SQLite's write lock kept the web's writes waiting."""
    plan = _Plan(owner_of={(row.item_type, row.item_id): row.owner_id for row in rows})
    for type_name in {row.item_type for row in rows}:
        ids = [row.item_id for row in rows if row.item_type == type_name]
        old: dict[tuple[Any, tuple[Any, ...]], list[int]] = {}
        for pk, item_id, *stored in SearchChunk.objects.filter(
            item_type=type_name, item_id__in=ids
        ).values_list(
            "pk", "item_id", "seq", "field", "start_line", "end_line", "start_char",
            "text_hash", "model",
        ):  # fmt: skip
            old.setdefault((item_id, tuple(stored)), []).append(int(pk))
        for item_id in ids:
            key = (type_name, item_id)
            chunks = chunks_by_item.get(key, ())
            plan.chunks[key] = len(chunks)
            new = plan.new.setdefault(key, [])
            for seq, (chunk, digest) in enumerate(zip(chunks, digests.get(key, ()), strict=True)):
                place = (
                    seq, chunk.field, chunk.start_line, chunk.end_line, chunk.start_char,
                    digest, model,
                )  # fmt: skip
                if old.get((item_id, place)):
                    old[(item_id, place)].pop()
                    continue
                vector, scale = vectors[digest]
                new.append(
                    SearchChunk(
                        owner_id=plan.owner_of[key],
                        item_type=type_name,
                        item_id=item_id,
                        seq=seq,
                        field=chunk.field,
                        start_line=chunk.start_line,
                        end_line=chunk.end_line,
                        start_char=chunk.start_char,
                        preview=chunk.text[:CHUNK_PREVIEW_CHARS]
                        if chunk.field == "content"
                        else "",
                        model=model,
                        text_hash=digest,
                        vector=vector,
                        scale=scale,
                    )
                )
        for (item_id, _), pks in old.items():
            plan.stale.setdefault((type_name, item_id), []).extend(pks)
    return plan


def _replace(rows: list[SearchDirty], plan: _Plan, report: IndexReport) -> None:
    """Make the items' stored chunks the planned ones (in the caller's short transaction). A
    dirty row another worker finished meanwhile — or a permanent delete erased — is gone: its
    item is left as it is."""
    still = SearchDirty.objects.select_for_update().filter(pk__in=[row.pk for row in rows])
    kept = set(still.values_list("pk", flat=True))
    rows = [row for row in rows if row.pk in kept]
    keys = [(row.item_type, row.item_id) for row in rows]
    stale = [pk for key in keys for pk in plan.stale.get(key, ())]
    new = [chunk for key in keys for chunk in plan.new.get(key, ())]
    for at in range(0, len(stale), 2000):
        report.removed += SearchChunk.objects.filter(pk__in=stale[at : at + 2000]).delete()[0]
    bulk.insert_objects(SearchChunk, new)
    for row in rows:  # a row marked again since it was read stays dirty
        SearchDirty.objects.filter(pk=row.pk, marked_at=row.marked_at).delete()
    by_owner: dict[Any, list[tuple[str, Any]]] = {}
    for key in keys:  # an item re-indexed unchanged leaves the owners' indexes current
        if plan.new.get(key) or plan.stale.get(key):
            by_owner.setdefault(plan.owner_of[key], []).append(key)
    for owner_id, changed in by_owner.items():
        search_marks.changed(owner_id, changed)
    report.items += len(rows)
    report.chunks += sum(plan.chunks.get(key, 0) for key in keys)
    report.written += len(new)
    report.owners |= {plan.owner_of[key] for key in keys}


# --- status and reindex -------------------------------------------------------------------------


def mark_all(*, owner_id: Any = None) -> int:
    """Mark every item (of one owner, or all) dirty; returns how many."""
    total = 0
    for type_name, model in item_types.registry().items():
        qs = model.objects.all()
        if owner_id is not None:
            qs = qs.filter(owner_id=owner_id)
        by_owner: dict[Any, list[Any]] = {}
        for pk, owner in qs.values_list("pk", "owner_id").iterator(chunk_size=5000):
            by_owner.setdefault(owner, []).append(pk)
        for owner, ids in by_owner.items():
            with transaction.atomic():
                search_marks.mark_dirty(owner_id=owner, item_type=type_name, item_ids=ids)
            total += len(ids)
    return total
