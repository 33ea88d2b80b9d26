"""Rows for background work under faults (issue 28, SPEC §15 and §17.1). Run them alone with
``python bench/run.py --only silent_receiver_captures,prune_changes_expired``.

| row | figure | target |
| --- | --- | --- |
| `silent_receiver_captures` | wall s from the first of 50 bookmark creates (capture on, local pages) until all 50 are `done`, while 5 webhooks of the same user at a receiver that accepts and never answers have 200 deliveries queued ahead of them (the server's own worker) | ≤ 60 s |
| `prune_changes_expired` | `prune_changes` over N expired changes in a fresh process: peak RSS above the process's idle, and the longest transaction it opened (N = 200 000; `--quick` 20 000) | ≤ 100 MB, ≤ 1 s |

The silent receiver is a socket on 127.0.0.1 that accepts connections and never answers (each
delivery attempt costs its 10 s timeout); the pages come from the outbound rows' local server.
The prune row writes its rows with SQL straight into the bench database (``manage.py shell``),
then prunes in a new ``manage.py shell`` that times each outermost transaction.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
from harness import (
    HOST,
    Bench,
    Call,
    Outcome,
    Scenario,
    http_outcome,
    register,
    register_env,
    register_summary,
    wait_for_tasks,
)
from outbound_local import local
from rows_outbound import list_bookmarks, one_shot, skip_warmup, user_client

ROWS = ("silent_receiver_captures", "prune_changes_expired")


class Silent:
    """Accepts connections and never answers; holds them until the bench ends."""

    def __init__(self) -> None:
        self.listener = socket.create_server((HOST, 0), backlog=1024)
        self.port = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.listener.accept()[0])
            except OSError:
                return


_silent: Silent | None = None


def silent() -> Silent:
    global _silent
    if _silent is None:
        _silent = Silent()
    return _silent


def setup_silent(bench: Bench, size: int | None) -> dict[str, Any]:
    wait_for_tasks(bench)
    client = user_client(bench, "bench_silent")
    for _ in range(5):
        r = client.post("/api/webhooks/", json={"url": f"http://{HOST}:{silent().port}/hook"})
        r.raise_for_status()
    return {"client": client, "report": {}}


def _pending_deliveries(bench: Bench) -> int:
    out = bench.server.manage(
        "shell",
        "-c",
        "from content.models.webhooks import WebhookDelivery as D; "
        "print(D.objects.filter(status='pending').count())",
    )
    return int(out.strip().splitlines()[-1])


def op_silent(call: Call) -> Outcome:
    if (skip := skip_warmup(call)) is not None:
        return skip
    c: httpx.Client = call.state["client"]
    n = 10 if call.bench.quick else 50
    for i in range(40):  # 40 notes x 5 webhooks = 200 deliveries, dispatched by the worker
        r = c.post("/api/notes/", json={"title": f"n{i}", "content": "x"})
        if r.status_code != 201:
            return http_outcome(r, 201)
    deadline = time.monotonic() + 60
    while _pending_deliveries(call.bench) < 200 and time.monotonic() < deadline:
        time.sleep(0.5)
    queued = _pending_deliveries(call.bench)
    base = local().base_url
    start = time.perf_counter()
    for i in range(n):
        r = c.post("/api/bookmarks/", json={"url": f"{base}/page/s-{i}"})
        if r.status_code != 201:
            return http_outcome(r, 201)
    statuses: dict[str, int] = {}
    while time.perf_counter() - start < 300:
        items = list_bookmarks(c)
        statuses = {}
        for item in items:
            s = (item.get("capture") or {}).get("status", "none")
            statuses[s] = statuses.get(s, 0) + 1
        if len(items) == n and statuses.get("pending", 0) == 0:
            break
        time.sleep(0.5)
    wall = time.perf_counter() - start
    call.state["report"].update(
        deliveries_queued=queued, captures=n, wall_s_all_done=round(wall, 3), statuses=statuses
    )
    problem = None if statuses.get("done") == n else f"captures after {wall:.0f} s: {statuses}"
    return Outcome(True, 200, problem=problem)


# --- prune -----------------------------------------------------------------------------------------

_FILL = """
import sys
from django.contrib.auth import get_user_model
from django.db import connection
owner, _ = get_user_model().objects.get_or_create(username="bench_prune")
n = {n}
with connection.cursor() as c:
    if connection.vendor == "postgresql":
        c.execute(
            "INSERT INTO content_change (xid, owner_id, item_type, item_id, action, changed_fields,"
            " source, at) SELECT 1, %s, 'note', gen_random_uuid(), 'created', '[]', 'bench', "
            "now() - interval '400 days' FROM generate_series(1, %s)", [owner.pk, n])
    else:
        c.execute(
            "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %s) "
            "INSERT INTO content_change (xid, owner_id, item_type, item_id, action, "
            "changed_fields, source, at) SELECT 0, %s, 'note', lower(hex(randomblob(16))), "
            "'created', '[]', 'bench', datetime('now', '-400 days') FROM s", [n, owner.pk])
print("filled", n)
"""

_PRUNE = """
import gc, json, resource, time
from django.db import transaction
from content.history import changes
gc.collect()
idle = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
longest = [0.0]
real_atomic = transaction.Atomic
class Timed(real_atomic):
    def __enter__(self):
        self._outer = not transaction.get_connection(self.using).in_atomic_block
        self._t = time.perf_counter()
        return super().__enter__()
    def __exit__(self, *exc):
        out = super().__exit__(*exc)
        if self._outer:
            longest[0] = max(longest[0], time.perf_counter() - self._t)
        return out
transaction.Atomic = Timed
start = time.perf_counter()
deleted = changes.prune_changes()
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"deleted": deleted, "wall_s": round(wall, 3),
    "longest_transaction_s": round(longest[0], 3), "rss_idle_mb": round(idle / 1024, 1),
    "rss_peak_above_idle_mb": round((peak - idle) / 1024, 1)}))
"""


def setup_prune(bench: Bench, size: int | None) -> dict[str, Any]:
    n = 20_000 if bench.quick else 200_000
    bench.server.manage("shell", "-c", _FILL.format(n=n), timeout=1800)
    return {"n": n, "report": {}}


def op_prune(call: Call) -> Outcome:
    if (skip := skip_warmup(call)) is not None:
        return skip
    out = call.bench.server.manage("shell", "-c", _PRUNE, timeout=1800)
    report = json.loads(out.strip().splitlines()[-1])
    call.state["report"].update(expired=call.state["n"], **report)
    problems = []
    if report["rss_peak_above_idle_mb"] > 100:
        problems.append(f"peak RSS {report['rss_peak_above_idle_mb']} MB above idle")
    if report["longest_transaction_s"] > 1:
        problems.append(f"a transaction of {report['longest_transaction_s']} s")
    return Outcome(True, 200, problem="; ".join(problems) or None)


def scenarios() -> list[Scenario]:
    @contextlib.contextmanager
    def state_client(bench: Bench) -> Iterator[None]:
        yield None

    rows = [
        one_shot(
            "silent_receiver_captures",
            op_silent,
            "issue 28: 200 deliveries queued to 5 webhooks at a receiver that never answers, "
            "then 50 captures: wall s until they are done (target <= 60 s)",
            setup_silent,
        ),
        one_shot(
            "prune_changes_expired",
            op_prune,
            "issue 28: prune_changes over 200 000 expired changes: peak RSS above idle and the "
            "longest transaction (targets <= 100 MB, <= 1 s)",
            setup_prune,
        ),
    ]
    for row in rows:
        row.open_worker = state_client
    return rows


def env(selected: Sequence[Scenario]) -> dict[str, str]:
    names = {s.name for s in selected}
    if "silent_receiver_captures" not in names:
        return {}
    return {"TIDDLY_OUTBOUND_ALLOWED_HOSTS": f"{HOST}:{silent().port},{HOST}:{local().port}"}


def targets(rows: list[dict[str, Any]]) -> str:
    lines = []
    for r in rows:
        if r["scenario"] == "silent_receiver_captures":
            v = r.get("wall_s_all_done")
            ok = v is not None and v <= 60
            lines.append(
                f"  silent_receiver_captures  wall s {v}  <= 60 s  {'ok' if ok else 'MISSED'}"
            )
        if r["scenario"] == "prune_changes_expired":
            rss, tx = r.get("rss_peak_above_idle_mb"), r.get("longest_transaction_s")
            ok = rss is not None and rss <= 100 and tx is not None and tx <= 1
            lines.append(
                f"  prune_changes_expired     +{rss} MB, longest tx {tx} s  <= 100 MB, <= 1 s  "
                f"{'ok' if ok else 'MISSED'}"
            )
    return "\n".join(["", "targets (issue 28):", *lines]) if lines else ""


register(*scenarios())
register_env(env)
register_summary(targets)
