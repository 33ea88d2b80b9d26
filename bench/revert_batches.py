#!/usr/bin/env python
"""Benchmark: revert a token that touched N notes (SPEC §6: batches of TIDDLY_REVERT_BATCH,
each request short). Prints the time of each request and of the whole revert.

    .venv/bin/python bench/revert_batches.py [--count 10000] [--database-url postgres://…/db]
"""

from __future__ import annotations

import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone import child_main, run_with_count


def child(count: int) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from content import services
    from content.history import Actor
    from content.models import Note
    from content.services import revert

    owner, _ = get_user_model().objects.get_or_create(username="bench")
    start = timezone.now() - timedelta(seconds=1)
    agent = Actor(source="api", token_prefix="tdly_bench")
    for n in range(count):
        note = services.create_item(
            owner=owner, model=Note, data={"title": f"n{n}", "content": "good"}, actor=Actor()
        )
        services.update_item(
            owner=owner,
            ref=services.ItemRef(Note, pk=note.pk),
            data={"content": "bad"},
            actor=agent,
        )
    if hasattr(revert, "summarize"):
        began = time.perf_counter()
        steps = revert.plan_revert(owner=owner, token_prefix="tdly_bench", since=start)
        plan = revert.summarize(steps)
        print(
            f"dry run of the whole revert: {time.perf_counter() - began:.2f} s {plan}", flush=True
        )
    total, requests, slowest = time.perf_counter(), 0, 0.0
    while True:
        began = time.perf_counter()
        report = revert.revert_token(
            owner=owner, token_prefix="tdly_bench", since=start, actor=Actor()
        )
        slowest = max(slowest, time.perf_counter() - began)
        requests += 1
        if not getattr(report, "remaining", 0):
            break
    print(
        f"{count} items: {requests} request(s), slowest {slowest:.2f} s, "
        f"all {time.perf_counter() - total:.2f} s",
        flush=True,
    )


if __name__ == "__main__":
    child_main(lambda arg: child(int(arg)), lambda: run_with_count(__file__, "count", 10_000))
