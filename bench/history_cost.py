#!/usr/bin/env python
"""What version history costs a large-note edit: storage and latency.

Creates a throwaway test database (``test_<name>`` of the configured DATABASE_URL, or an
in-memory SQLite database without one), creates a 1,000,000-character note through the services
and makes 100 sequential single-line str-replace edits — once with history recording on and once
with ``content.history.record_version`` replaced by a no-op (this script only) — through the
services and through the REST API (DRF's in-process APIClient, no socket). Reports per-edit
p50/p95/mean latency pooled over all rounds, the time spent in the recording itself, and the
history bytes the 100 edits added (UTF-8, and as stored by PostgreSQL after compression).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tiddly_bench python bench/history_cost.py

The end-to-end HTTP figure over a real server with concurrency is bench/run.py's row
"str-replace on a 1,000,000-char note with history on".
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tiddly.settings")
os.environ.setdefault("TIDDLY_THROTTLE_ENABLED", "false")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.urls import reverse  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from content import history, services  # noqa: E402
from content.history import Actor  # noqa: E402
from content.models import ItemVersion, Note  # noqa: E402
from content.services import ItemRef  # noqa: E402
from tiddly.models import ApiToken  # noqa: E402

CHARS = 1_000_000
LINE = 49  # + "\n"


def document(seed: int) -> str:
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz     "
    return "".join("".join(rng.choices(alphabet, k=LINE)) + "\n" for _ in range(CHARS // 50))


@contextlib.contextmanager
def history_off() -> Iterator[None]:
    original = history.record_version
    setattr(history, "record_version", lambda **kwargs: None)  # noqa: B010 (a stand-in)
    try:
        yield
    finally:
        history.record_version = original


def edits(text: str, count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    lines = text.split("\n")
    picked = rng.sample(range(len(lines) - 1), count)
    return [(lines[i], "".join(rng.choices("ABCDEFGHIJ ", k=LINE))) for i in picked]


def via_services(owner: Any) -> Callable[[Note, str, str], None]:
    def edit(note: Note, old: str, new: str) -> None:
        services.edit_content(
            owner=owner, ref=ItemRef(Note, pk=note.pk), old_str=old, new_str=new, actor=Actor()
        )

    return edit


def via_http(owner: Any) -> Callable[[Note, str, str], None]:
    _, token = ApiToken.issue(owner=owner, name="bench")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    def edit(note: Note, old: str, new: str) -> None:
        url = reverse("note-str-replace", args=[note.pk])
        response = client.patch(url, {"old_str": old, "new_str": new}, format="json")
        assert response.status_code == 200, response.content[:300]

    return edit


def run(owner: Any, edit: Callable[[Note, str, str], None], count: int, seed: int) -> dict:
    text = document(seed)
    note = services.create_item(
        owner=owner, model=Note, data={"title": "big", "content": text}, actor=Actor()
    )
    timings = []
    for old, new in edits(text, count, seed):
        start = time.perf_counter()
        edit(note, old, new)
        timings.append(time.perf_counter() - start)
    rows = ItemVersion.objects.filter(item_id=note.pk, version__gt=1)
    added = sum(
        len((r.content_patch or "").encode()) + len((r.content_snapshot or "").encode())
        for r in rows
    )
    if history.item_versions(note).filter(version__gt=1).exists():
        assert history.reconstruct(note, 1) == text  # the oldest version is still exact
    return {
        "timings": timings,
        "versions": rows.count(),
        "bytes": added,
        "stored": _stored_bytes(note),
    }


@contextlib.contextmanager
def timed_recording(spent: list[float]) -> Iterator[None]:
    """Time the history recording itself (inside each edit's transaction)."""
    original = history.record_version

    def record_version(**kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(**kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    setattr(history, "record_version", record_version)  # noqa: B010 (a stand-in)
    try:
        yield
    finally:
        history.record_version = original


def summary(timings: list[float]) -> tuple[float, float, float]:
    ordered = sorted(timings)
    p95 = ordered[max(0, math.ceil(len(ordered) * 0.95) - 1)]
    return statistics.median(ordered) * 1000, p95 * 1000, statistics.fmean(ordered) * 1000


def _stored_bytes(note: Note) -> int | None:
    """Bytes PostgreSQL actually stores for versions 2.. (after TOAST compression)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(pg_column_size(content_patch)), 0) "
            "+ coalesce(sum(pg_column_size(content_snapshot)), 0) "
            "FROM content_itemversion WHERE item_id = %s AND version > 1",
            [note.pk],
        )
        return int(cursor.fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=4, help="alternating on/off rounds")
    args = parser.parse_args()

    from django.contrib.auth import get_user_model

    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        owner = get_user_model().objects.create_user(username="bench")
        print(f"database: {connection.vendor}, {args.edits} single-line edits of {CHARS:,} chars")
        print(
            f"{'path':9} {'history':8} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8} "
            f"{'versions':>8} {'bytes':>9} {'stored':>9}"
        )
        for path, make in (("services", via_services), ("http", via_http)):
            edit = make(owner)
            found: dict[str, list[dict]] = {"on": [], "off": []}
            recording: list[float] = []
            for round_ in range(args.rounds):  # alternate the order: drift hits both modes
                for mode in ("on", "off") if round_ % 2 == 0 else ("off", "on"):
                    ctx = history_off() if mode == "off" else timed_recording(recording)
                    with ctx:
                        found[mode].append(run(owner, edit, args.edits, seed=round_))
            for mode, runs in found.items():
                p50, p95, mean = summary([t for r in runs for t in r["timings"]])
                last = runs[-1]
                stored = "-" if last["stored"] is None else f"{last['stored']:,}"
                print(
                    f"{path:9} {mode:8} {p50:8.2f} {p95:8.2f} {mean:8.2f} "
                    f"{last['versions']:8} {last['bytes']:9,} {stored:>9}"
                )
            p50, p95, mean = summary(recording)
            print(
                f"{path:9} recording itself: p50 {p50:.2f} ms, p95 {p95:.2f} ms, mean {mean:.2f} ms"
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
