"""A living library (SPEC §16, round 4): searches between writes, filters, many owners.

In-process on a fresh database (a temporary SQLite file, or ``--database-url``), with the real
configured provider. ``--scale S`` divides the corpus and the index's thresholds (exact limit,
candidates) by S, so a small run exercises the same regimes as SPEC's size (S=1):

- agent loop: ``--loops`` x (edit a short note through the item service, index what is marked as
  the worker would, one hybrid search): search p50/p95, index builds during the loop, and the
  time from the edit until semantic search ranks the edited note in its top 10;
- ``type=prompt&mode=semantic``: top 10 against an exact scan of the 50 prompts' stored vectors;
- recall: 40 notes queried by their title and opening, in semantic's/hybrid's top 10;
- 20 owners x 25 000/S chunks, searched round-robin: p50 and RSS above idle.

Runs on the code before round 4 too (it only uses ``ranking.search`` and the services), for a
side-by-side. ``python bench/search_living.py --scale 16``
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from search_meaning import WORDS, rss_mb, setup_db, text  # noqa: E402


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def scale_thresholds(scale: int) -> None:
    """The index's limits divided by ``scale`` (new code: content.search.vectors; old: semantic)."""
    from content.search import semantic

    try:
        from content.search import vectors as module
    except ImportError:
        module = semantic  # type: ignore[assignment]  # before round 4
    module.EXACT_ROWS //= scale
    module.RERANK //= scale
    if hasattr(module, "RESCORE"):
        module.RESCORE = max(module.RESCORE // scale, 16)
    if hasattr(module, "DELTA_ROWS"):
        module.DELTA_ROWS //= scale


def count_builds() -> list[int]:
    from content.search import semantic

    builds = [0]
    original = semantic._build

    def counted(*a: Any, **k: Any) -> Any:
        builds[0] += 1
        return original(*a, **k)

    semantic._build = counted  # type: ignore[assignment]
    return builds


def make_owner(name: str, notes: int, rng: random.Random) -> Any:
    from django.contrib.auth import get_user_model

    from content.models import Note

    user = get_user_model().objects.create_user(name, password="x")
    Note.objects.bulk_create(
        [
            Note(
                owner=user,
                title=f"Note {i} {rng.choice(WORDS)} {rng.choice(WORDS)}",
                content=text(rng, rng.randint(1000, 2000)),
            )
            for i in range(notes)
        ],
        batch_size=1000,
    )
    return user


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--database-url")
    ap.add_argument("--scale", type=int, default=16)
    ap.add_argument("--loops", type=int, default=100)
    ap.add_argument("--owners", type=int, default=20)
    args = ap.parse_args()
    setup_db(args.database_url)
    scale_thresholds(args.scale)
    builds = count_builds()
    from content.history import Actor
    from content.models import Note
    from content.queries import lists
    from content.queries.items import ItemRef
    from content.search import indexing, ranking
    from content.search.embeddings import provider
    from content.services import create_item, update_item
    from prompts.models import Prompt

    idle = rss_mb()
    rng = random.Random(11)
    actor = Actor(source="bench")
    # --- the corpus: 10 000/S short notes, one note of 60 000/S chunks' worth, 50 prompts
    user = make_owner("bench", 10_000 // args.scale, rng)
    big_chunks = 60_000 // args.scale
    Note.objects.create(owner=user, title="Big log", content=text(rng, big_chunks * 1500))
    topics = ["cluster upgrade", "sourdough bread", "tax receipts", "guitar chords", "backups"]
    for i in range(50):
        create_item(
            owner=user,
            model=Prompt,
            data={
                "name": f"prompt-{i}",
                "title": f"{topics[i % 5]} helper {i}",
                "content": f"Write about {topics[(i * 3) % 5]} and {rng.choice(WORDS)} ({i}).",
            },
            actor=actor,
        )
    indexing.mark_all(owner_id=user.pk)
    t = time.perf_counter()
    report = indexing.index_pending(owner_id=user.pk)
    print(f"indexed {report.items} items, {report.chunks} chunks: {time.perf_counter() - t:.0f}s")
    params = lists.ListParams
    ranking.search(user, ["note", "prompt"], params(q="warm up", limit=20), mode="hybrid")

    # --- type=prompt semantic: against an exact scan of the prompts' stored vectors
    import numpy as np

    from content.models.search import SearchChunk

    same = 0
    queries = ["cluster upgrade helper", "bread baking", "receipts for taxes", "guitar", "backup"]
    for q in queries:
        vector = provider().embed([q])[0]
        best: dict[str, float] = {}
        for item_id, raw, scale in SearchChunk.objects.filter(
            owner=user, item_type="prompt"
        ).values_list("item_id", "vector", "scale"):
            cos = float(np.frombuffer(bytes(raw), np.int8).astype(np.float32) @ vector) * scale
            best[str(item_id)] = max(best.get(str(item_id), -2.0), cos)
        exact = sorted(best, key=lambda k: -best[k])[:10]
        p = params(q=q, limit=10)
        kwargs: dict[str, Any] = {"mode": "semantic"}
        if "min_score" in ranking.search.__code__.co_varnames:
            kwargs["min_score"] = -1.0
        found = [r["id"] for r in ranking.search(user, ["prompt"], p, **kwargs)["results"]]
        same += found == exact
        print(f"  type=prompt {q!r}: {len(set(found) & set(exact))}/10 of the exact top 10")
    print(f"type=prompt&mode=semantic: {same}/{len(queries)} queries equal the exact top 10")

    # --- recall: 40 notes by their own title and opening
    notes = list(Note.objects.filter(owner=user, title__startswith="Note ").order_by("title")[:40])
    hits = {"semantic": 0, "hybrid": 0}
    for note in notes:
        q = f"{note.title} {note.content[:200]}"[:500]
        for mode in hits:
            ids = [
                r["id"]
                for r in ranking.search(user, ["note"], params(q=q, limit=10), mode=mode)["results"]
            ]
            hits[mode] += str(note.pk) in ids
    print(
        f"recall, title+opening in top 10: semantic {hits['semantic']}/40, hybrid {hits['hybrid']}/40"
    )

    # --- the agent loop
    short = list(
        Note.objects.filter(owner=user, title__startswith="Note ").order_by("pk")[: args.loops]
    )
    builds[0] = 0
    search_times: list[float] = []
    found_after: list[float] = []
    queries = [
        "upgrade the cluster nodes",
        "baking bread at home",
        "tax receipts",
        "restore a backup",
    ]
    animals = ["zebra", "penguin", "walrus", "giraffe", "octopus", "hedgehog", "falcon", "otter"]
    for i, note in enumerate(short):
        animal = animals[i % len(animals)]
        edited = time.perf_counter()
        update_item(
            owner=user,
            ref=ItemRef(Note, pk=note.pk),
            data={"content": f"Field notes on the {animal} {i}: habitat, diet and migration."},
            actor=actor,
        )
        indexing.index_pending(owner_id=user.pk)  # what the task worker does next
        t = time.perf_counter()
        ranking.search(user, ["note", "prompt"], params(q=queries[i % 4], limit=20), mode="hybrid")
        search_times.append(time.perf_counter() - t)
        p = params(q=f"{animal} {i} habitat diet migration field notes", limit=10)
        ids = [r["id"] for r in ranking.search(user, ["note"], p, mode="semantic")["results"]]
        found_after.append(time.perf_counter() - edited if str(note.pk) in ids else float("inf"))
    found = [f for f in found_after if f != float("inf")]
    print(
        f"agent loop x{len(short)}: hybrid p50 {pct(search_times, 0.5):.0f} ms, p95 "
        f"{pct(search_times, 0.95):.0f} ms; index builds {builds[0]}; edit found by semantic "
        f"{len(found)}/{len(short)}, p50 {pct(found or [0], 0.5):.0f} ms after the edit "
        f"(incl. indexing)"
    )

    # --- many owners round-robin
    per_owner = 25_000 // args.scale
    owners = [make_owner(f"o{n}", per_owner // 2, rng) for n in range(args.owners)]
    for o in owners:
        indexing.mark_all(owner_id=o.pk)
    indexing.index_pending()
    chunks = SearchChunk.objects.exclude(owner=user).count()
    before = rss_mb()
    samples = []
    builds[0] = 0
    for r in range(5):
        for n, o in enumerate(owners):
            t = time.perf_counter()
            ranking.search(o, ["note"], params(q=queries[(r + n) % 4], limit=20), mode="hybrid")
            samples.append(time.perf_counter() - t)
    print(
        f"{args.owners} owners ({chunks // args.owners} chunks each) round-robin x5: hybrid p50 "
        f"{pct(samples, 0.5):.0f} ms, p95 {pct(samples, 0.95):.0f} ms; builds {builds[0]}; RSS "
        f"{rss_mb() - idle:.0f} MB above idle ({rss_mb() - before:+.0f} MB over the searches)"
    )
    print(
        f"load: {os.getloadavg()[0]:.1f}; median of everything: "
        f"{statistics.median(samples) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
