#!/usr/bin/env python
"""Benchmark: how long a share page takes to answer for a valid, an unknown, a revoked (rotated
away or unshared) and a trashed token (SPEC §17.4: the misses must be indistinguishable).

Runs in-process (Django's test Client against a fresh database, throttle off), interleaving the
kinds round by round so drift hits them alike, and prints median / p90 per kind in microseconds.
Measured, not asserted.

    .venv/bin/python bench/share_404_timing.py [--rounds 2000] [--database-url postgres://…/db]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone import child_main, run_with_count


def child(rounds: int) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from content.history import Actor
    from content.models import Note
    from content.queries import ItemRef
    from content.services import create_item, sharing, trash_item

    actor = Actor(source="bench")
    owner, _ = get_user_model().objects.get_or_create(username="bench-share")

    def shared(title: str) -> tuple[Note, str]:
        note = create_item(owner=owner, model=Note, data={"title": title, "content": "# Hi\n" * 50}, actor=actor)  # fmt: skip
        ref = ItemRef(Note, pk=note.pk)
        return note, sharing.share_item(owner=owner, ref=ref, actor=actor).share.token

    for n in range(200):  # some rows, so the indexes are not trivially tiny
        shared(f"filler {n}")
    _, valid = shared("valid")
    rotated_note, rotated = shared("rotated")
    sharing.share_item(owner=owner, ref=ItemRef(Note, pk=rotated_note.pk), rotate=True, actor=actor)
    unshared_note, unshared = shared("unshared")
    sharing.unshare_item(owner=owner, ref=ItemRef(Note, pk=unshared_note.pk), actor=actor)
    trashed_note, trashed = shared("trashed")
    trash_item(owner=owner, ref=ItemRef(Note, pk=trashed_note.pk), actor=actor)
    kinds = {
        "valid (200)": valid,
        "unknown": "x" * len(valid),
        "revoked by rotation": rotated,
        "unshared": unshared,
        "trashed": trashed,
    }
    client = Client()
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    for _ in range(50):  # warm up
        for token in kinds.values():
            client.get(f"/s/{token}")
    for _ in range(rounds):
        for kind, token in kinds.items():
            began = time.perf_counter()
            response = client.get(f"/s/{token}")
            times[kind].append(time.perf_counter() - began)
            assert response.status_code == (200 if kind.startswith("valid") else 404), kind
    print(f"{rounds} rounds, {os.environ['DATABASE_URL'].split(':')[0]}")
    print(f"{'kind':<22}{'median µs':>12}{'p90 µs':>10}")
    for kind, values in times.items():
        values.sort()
        median = statistics.median(values) * 1e6
        p90 = values[int(len(values) * 0.9)] * 1e6
        print(f"{kind:<22}{median:>12.0f}{p90:>10.0f}")


if __name__ == "__main__":
    child_main(
        lambda arg: child(int(arg)),
        lambda: run_with_count(
            __file__, "rounds", 2000, TIDDLY_THROTTLE_ENABLED="0", TIDDLY_EMBEDDED_WORKER="0"
        ),
    )
