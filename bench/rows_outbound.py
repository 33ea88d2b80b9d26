"""Rows for work that leaves the request: page capture (issue 19, SPEC §15) and the change feed
and webhooks (issue 21, SPEC §17). Run them alone with ``make bench-outbound`` or
``python bench/run.py --only capture_100_pages,...`` (see ``OUTBOUND_ROWS``).

| row | figure | target |
| --- | --- | --- |
| `capture_100_pages` | wall s from the first of 100 bookmark creates (capture on, each a local ~50 KB article) until all 100 captures are `done` (one task worker) | ≤ 60 s |
| `extract_1mb_html` | CPU s (`time.process_time`) of `content.text.page.extract` on a 1 MB article, median of 5, in a child process | ≤ 1 s |
| `bookmark_create_capture` | `POST /api/bookmarks/` p50 with capture on vs `capture: false`, requests interleaved | on/off p50 within noise: the 95 % bootstrap interval of the ratio holds 1.0 |
| `changes_feed_10k` | wall s to read a feed of 10 000 changes at `limit=500` (20 pages), median of 3 reads | ≤ 2 s |
| `write_webhooks_5` | `POST /api/notes/` p50 of a user with 5 active webhooks vs one with none, interleaved | within noise (as above) |
| `webhook_deliveries_1k` | wall s from the import that queues 1 000 deliveries until the receiver has all 1 000, signatures verified | ≤ 60 s |

The pages and the webhook receiver are one local ``ThreadingHTTPServer`` on 127.0.0.1 started by
this module before the server under test, which gets ``TIDDLY_OUTBOUND_ALLOWED_HOSTS`` naming
exactly that ``127.0.0.1:port`` (``register_env``) — only when one of these rows is selected.
The server's embedded task worker (one thread) does the captures and deliveries. Each row has its
own user, so its lists and feed hold only its own items; rows that leave work queued wait until
the task queue is empty (``after``) so the next row starts on an idle worker.

The targets and the MCP `get_item` row of issue 22 (≥ 60 calls/s at 10 000 lines) are compared in
a summary printed after the table.
"""

from __future__ import annotations

import contextlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
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
    make_client,
    register,
    register_env,
    register_summary,
    wait_for_tasks,
)
from outbound_local import BIG_ARTICLE_BYTES, article_html, local

GROUP = "outbound"

# --- helpers -------------------------------------------------------------------------------------


def user_client(bench: Bench, username: str) -> httpx.Client:
    """A client with a fresh token of ``username`` (created if needed): each row its own user."""
    out = bench.server.manage("create_token", username, "--name", "bench", "--create-user").strip()
    token = next((w for w in out.split() if w.startswith("tdly_")), out.splitlines()[-1])
    return make_client(bench.server.base_url, token, timeout=bench.args.request_timeout)


def list_bookmarks(client: httpx.Client) -> list[dict[str, Any]]:
    """Every bookmark of the client's user (the list's pages followed)."""
    items: list[dict[str, Any]] = []
    while True:
        r = client.get("/api/bookmarks/", params={"limit": 100, "offset": len(items)})
        r.raise_for_status()
        body = r.json()
        items += body["results"]
        if not body["next"] or not body["results"]:
            return items


def feed_end(client: httpx.Client) -> str:
    """A cursor after every change the client's user can see in the feed now."""
    since = None
    while True:
        r = client.get(
            "/api/changes/", params={"limit": 500, **({"since": since} if since else {})}
        )
        r.raise_for_status()
        body = r.json()
        since = body["next_cursor"]
        if not body["has_more"]:
            return since


def seconds_to_feed(
    client: httpx.Client, item_id: str, since: str, written: float, timeout: float = 120
) -> tuple[float | None, str]:
    """Poll the feed after ``since`` (every 50 ms, as a client does) until a change of
    ``item_id`` is in it: (seconds from ``written``, a perf_counter, or None; the cursor)."""
    while time.perf_counter() - written < timeout:
        r = client.get("/api/changes/", params={"since": since, "limit": 500})
        r.raise_for_status()
        body = r.json()
        since = body["next_cursor"]
        if any(change["id"] == item_id for change in body["changes"]):
            return round(time.perf_counter() - written, 3), since
        if not body["has_more"]:
            time.sleep(0.05)
    return None, since


def netscape(urls: Sequence[str]) -> bytes:
    rows = "".join(
        f'<DT><A HREF="{u}" ADD_DATE="1700000000">Bench {i}</A>\n' for i, u in enumerate(urls)
    )
    return f"<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n{rows}</DL><p>\n".encode()


def import_bookmarks(client: httpx.Client, urls: Sequence[str]) -> httpx.Response:
    return client.post(
        "/api/import/",
        files={"file": ("bookmarks.html", netscape(urls), "text/html")},
        data={"format": "netscape", "capture": "false"},
    )


def skip_warmup(call: Call) -> Outcome | None:
    return Outcome(True, 200) if call.warmup else None


# An A/B row: 400 requests by one worker, the two variants interleaved.
INTERLEAVED: dict[str, Any] = {
    "sized": False,
    "group": GROUP,
    "concurrency": (1,),
    "count": lambda size: 400,
}


def one_shot(
    name: str, op: Any, description: str, setup: Any, after: Any = None, count: int = 1
) -> Scenario:
    """A row whose one timed 'request' is the whole measurement (its p50 is the figure)."""
    return Scenario(
        name,
        op,
        description,
        setup=setup,
        after=after,
        sized=False,
        group=GROUP,
        concurrency=(1,),
        count=lambda size: count,
        warmup=0,
        report=lambda bench, state: state["report"],
    )


# --- issue 19: page capture -----------------------------------------------------------------------


def setup_capture_100(bench: Bench, size: int | None) -> dict[str, Any]:
    wait_for_tasks(bench)
    return {"client": user_client(bench, "bench_capture"), "report": {}}


def op_capture_100(call: Call) -> Outcome:
    if (skip := skip_warmup(call)) is not None:
        return skip
    c: httpx.Client = call.state["client"]
    n = 10 if call.bench.quick else 100
    base = local().base_url
    start = time.perf_counter()
    for i in range(n):
        r = c.post("/api/bookmarks/", json={"url": f"{base}/page/a-{i}"})
        if r.status_code != 201:
            return http_outcome(r, 201)
    queued = time.perf_counter() - start
    statuses: dict[str, int] = {}
    while time.perf_counter() - start < 180:
        items = list_bookmarks(c)
        statuses = {}
        for item in items:
            s = (item.get("capture") or {}).get("status", "none")
            statuses[s] = statuses.get(s, 0) + 1
        if len(items) == n and statuses.get("pending", 0) == 0:
            break
        time.sleep(0.25)
    wall = time.perf_counter() - start
    call.state["report"].update(
        captures=n, queue_s=round(queued, 3), wall_s_all_done=round(wall, 3), statuses=statuses
    )
    problem = None
    if statuses.get("done", 0) != n:
        problem = f"captures not all done after {wall:.0f} s: {statuses}"
    return Outcome(True, 200, problem=problem)


_EXTRACT = """
import json, statistics, sys, time
from content.text import page
body = open(sys.argv[1], 'rb').read()
runs = int(sys.argv[2])
page.extract(body, content_type='text/html', charset='utf-8')  # imports, caches: not timed
cpu, wall = [], []
for _ in range(runs):
    c0, w0 = time.process_time(), time.perf_counter()
    out = page.extract(body, content_type='text/html', charset='utf-8')
    cpu.append(time.process_time() - c0)
    wall.append(time.perf_counter() - w0)
print(json.dumps({"cpu": cpu, "wall": wall, "chars": len(out.content or ""), "title": out.title}))
"""


def setup_extract(bench: Bench, size: int | None) -> dict[str, Any]:
    return {"report": {}}


def op_extract(call: Call) -> Outcome:
    if (skip := skip_warmup(call)) is not None:
        return skip
    html = article_html("big", BIG_ARTICLE_BYTES).encode()
    with tempfile.NamedTemporaryFile(suffix=".html") as f:
        f.write(html)
        f.flush()
        res = subprocess.run(
            [sys.executable, "-c", _EXTRACT, f.name, "2" if call.bench.quick else "5"],
            cwd=call.bench.server.app_dir,
            env=call.bench.server.env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    if res.returncode != 0:
        return Outcome(False, 0, detail=res.stderr[-300:])
    out = json.loads(res.stdout.strip().splitlines()[-1])
    call.state["report"].update(
        html_bytes=len(html),
        cpu_s_median=round(statistics.median(out["cpu"]), 3),
        cpu_s_runs=[round(x, 3) for x in out["cpu"]],
        wall_s_median=round(statistics.median(out["wall"]), 3),
        markdown_chars=out["chars"],
    )
    problem = None if out["chars"] > BIG_ARTICLE_BYTES // 4 else "extracted text is short"
    return Outcome(True, 200, problem=problem)


def _ab_report(state: dict[str, Any], a: str, b: str) -> dict[str, Any]:
    """p50 of each variant, their ratio and its noise: the 95 % bootstrap interval of the ratio
    (2 000 resamples of each variant). "Within noise" = the interval holds 1.0."""
    lat: dict[str, list[float]] = state["lat"]
    p = {k: statistics.median(v) * 1000 if v else None for k, v in lat.items()}
    ratio = p[a] / p[b] if p.get(a) and p.get(b) else None
    low = high = None
    if ratio:
        rng = random.Random(19_21)
        ratios = sorted(
            statistics.median(rng.choices(lat[a], k=len(lat[a])))
            / statistics.median(rng.choices(lat[b], k=len(lat[b])))
            for _ in range(2_000)
        )
        low, high = ratios[50], ratios[1_949]
    return {
        f"p50_{a}_ms": round(p[a], 2) if p.get(a) else None,
        f"p50_{b}_ms": round(p[b], 2) if p.get(b) else None,
        f"n_{a}": len(lat[a]),
        f"n_{b}": len(lat[b]),
        "ratio": round(ratio, 3) if ratio else None,
        "ratio_95": [round(low, 3), round(high, 3)] if low and high else None,
    }


def _within_noise(row: dict[str, Any]) -> bool | None:
    interval = row.get("ratio_95")
    return None if not interval else interval[0] <= 1.0 <= interval[1]


def setup_create_capture(bench: Bench, size: int | None) -> dict[str, Any]:
    wait_for_tasks(bench)
    return {"client": user_client(bench, "bench_capture_ab"), "lat": {"on": [], "off": []}}


def op_create_capture(call: Call) -> Outcome:
    """Even requests with capture on (the default), odd ones with ``capture: false``."""
    on = call.i % 2 == 0
    url = f"{local().base_url}/page/c-{call.i}-{call.worker}"
    body: dict[str, Any] = {"url": url, "title": "bench"}
    if not on:
        body["capture"] = False
    start = time.perf_counter()
    r = call.state["client"].post("/api/bookmarks/", json=body)
    took = time.perf_counter() - start
    if not call.warmup:
        call.state["lat"]["on" if on else "off"].append(took)
    problem = None
    if r.status_code == 201:
        status = (r.json().get("capture") or {}).get("status")
        if (on and status != "pending") or (not on and status not in (None, "none")):
            problem = f"capture {'on' if on else 'off'}: capture.status {status!r}"
    return http_outcome(r, 201, problem)


# --- issue 21: change feed and webhooks -----------------------------------------------------------


def setup_feed(bench: Bench, size: int | None) -> dict[str, Any]:
    client = user_client(bench, "bench_feed")
    n = 1_000 if bench.quick else 10_000
    urls = [f"https://feed.example/{i}" for i in range(n)]
    start = time.perf_counter()
    r = import_bookmarks(client, urls)
    if r.status_code != 200:
        raise RuntimeError(f"feed import: HTTP {r.status_code}: {r.text[:300]}")
    imported = time.perf_counter() - start
    wait_for_tasks(bench)  # the import's search-index work, so the reads run on an idle server
    return {
        "client": client,
        "n": n,
        "report": {"changes": n, "import_s": round(imported, 2), "reads_s": []},
    }


def op_feed(call: Call) -> Outcome:
    c: httpx.Client = call.state["client"]
    start = time.perf_counter()
    seen, pages, since, nbytes = 0, 0, None, 0
    ids: set[str] = set()
    while True:
        params: dict[str, Any] = {"limit": 500}
        if since:
            params["since"] = since
        r = c.get("/api/changes/", params=params)
        if r.status_code != 200:
            return http_outcome(r, 200)
        body = r.json()
        pages += 1
        nbytes += len(r.content)
        seen += len(body["changes"])
        if call.warmup:
            ids.update(ch["id"] for ch in body["changes"])
        since = body["next_cursor"]
        if not body["has_more"]:
            break
    took = time.perf_counter() - start
    if not call.warmup:
        call.state["report"]["reads_s"].append(round(took, 3))
        call.state["report"]["pages"] = pages
    problem = None
    want = call.state["n"]
    if seen != want or (call.warmup and len(ids) != want):
        problem = f"feed gave {seen} changes ({len(ids) or '?'} items), want {want}"
    return Outcome(True, 200, nbytes, problem)


HOOKS = 5


def setup_webhooks(bench: Bench, size: int | None) -> dict[str, Any]:
    wait_for_tasks(bench)
    with_hooks = user_client(bench, "bench_hooks5")
    without = user_client(bench, "bench_hooks0")
    srv = local()
    for k in range(HOOKS):
        r = with_hooks.post("/api/webhooks/", json={"url": f"{srv.base_url}/hook/e{k}"})
        if r.status_code != 201:
            raise RuntimeError(f"webhook create: HTTP {r.status_code}: {r.text[:300]}")
        srv.secrets[f"e{k}"] = r.json()["secret"]
    return {"clients": (with_hooks, without), "lat": {"hooks": [], "none": []}, "writes": 0}


def op_write_webhooks(call: Call) -> Outcome:
    """Even requests by the user with 5 webhooks, odd ones by the user with none."""
    hooks = call.i % 2 == 0
    client = call.state["clients"][0 if hooks else 1]
    body = {"title": f"bench hook {call.i}", "content": "a small note\n" * 5}
    start = time.perf_counter()
    r = client.post("/api/notes/", json=body)
    took = time.perf_counter() - start
    if hooks and r.status_code == 201:
        call.state["writes"] += 1
    if not call.warmup:
        call.state["lat"]["hooks" if hooks else "none"].append(took)
    return http_outcome(r, 201)


def after_webhooks(bench: Bench, state: dict[str, Any], conc: int) -> list[str]:
    """Wait for the row's deliveries (5 per write of the hooked user) and check them."""
    want = state["writes"] * HOOKS
    deadline = time.monotonic() + 180
    srv = local()
    while srv.count("e") < want and time.monotonic() < deadline:
        time.sleep(0.5)
    problems = []
    got = srv.count("e")
    if got < want:
        problems.append(f"receiver got {got} of {want} deliveries")
    bad = sum(v for k, v in srv.bad_signatures.items() if k.startswith("e"))
    if bad:
        problems.append(f"{bad} deliveries with a bad signature")
    return problems + wait_for_tasks(bench)


def setup_deliveries(bench: Bench, size: int | None) -> dict[str, Any]:
    wait_for_tasks(bench)
    client = user_client(bench, "bench_deliveries")
    srv = local()
    r = client.post("/api/webhooks/", json={"url": f"{srv.base_url}/hook/f"})
    if r.status_code != 201:
        raise RuntimeError(f"webhook create: HTTP {r.status_code}: {r.text[:300]}")
    srv.secrets["f"] = r.json()["secret"]
    return {"client": client, "report": {}}


def op_deliveries(call: Call) -> Outcome:
    if (skip := skip_warmup(call)) is not None:
        return skip
    n = 50 if call.bench.quick else 1_000
    srv = local()
    start = time.perf_counter()
    r = import_bookmarks(call.state["client"], [f"https://hook.example/{i}" for i in range(n)])
    if r.status_code != 200:
        return http_outcome(r, 200)
    enqueued = time.perf_counter() - start
    while srv.count("f") < n and time.perf_counter() - start < 300:
        time.sleep(0.1)
    wall = time.perf_counter() - start
    got = srv.count("f")
    call.state["report"].update(
        deliveries=n,
        import_s=round(enqueued, 3),
        wall_s_all_delivered=round(wall, 3),
        received=got,
        posts=srv.posts.get("f", 0),
        signatures_verified=srv.verified.get("f", 0),
        bad_signatures=srv.bad_signatures.get("f", 0),
    )
    problems = []
    if got < n:
        problems.append(f"receiver got {got} of {n} deliveries after {wall:.0f} s")
    if srv.bad_signatures.get("f"):
        problems.append(f"{srv.bad_signatures['f']} bad signatures")
    return Outcome(True, 200, problem="; ".join(problems) or None)


# --- registration ---------------------------------------------------------------------------------


def scenarios() -> list[Scenario]:
    @contextlib.contextmanager
    def state_client(bench: Bench) -> Iterator[None]:
        yield None  # the rows use their own users' clients, kept in the row state

    rows = [
        one_shot(
            "capture_100_pages",
            op_capture_100,
            "issue 19: 100 bookmarks of local ~50 KB pages created with capture on; wall s "
            "until all captures are done, one worker (target <= 60 s)",
            setup_capture_100,
        ),
        one_shot(
            "extract_1mb_html",
            op_extract,
            "issue 19: CPU s to extract a 1 MB article (median of 5, in-process; target <= 1 s)",
            setup_extract,
        ),
        Scenario(
            "bookmark_create_capture",
            op_create_capture,
            "issue 19: POST /api/bookmarks/ p50, capture on vs capture:false interleaved "
            "(target: ratio within noise)",
            setup=setup_create_capture,
            after=lambda bench, state, conc: wait_for_tasks(bench),
            report=lambda bench, state: _ab_report(state, "on", "off"),
            **INTERLEAVED,
        ),
        Scenario(
            "changes_feed_10k",
            op_feed,
            "issue 21: wall s to read 10 000 changes via GET /api/changes/?limit=500, "
            "median of 3 (target <= 2 s)",
            setup=setup_feed,
            sized=False,
            group=GROUP,
            concurrency=(1,),
            count=lambda size: 3,
            warmup=1,
            report=lambda bench, state: state["report"],
        ),
        Scenario(
            "write_webhooks_5",
            op_write_webhooks,
            "issue 21: POST /api/notes/ p50 of a user with 5 webhooks vs none, interleaved "
            "(target: ratio within noise)",
            setup=setup_webhooks,
            after=after_webhooks,
            report=lambda bench, state: _ab_report(state, "hooks", "none"),
            **INTERLEAVED,
        ),
        one_shot(
            "webhook_deliveries_1k",
            op_deliveries,
            "issue 21: wall s from an import queueing 1 000 deliveries until a local receiver "
            "has them all, signatures verified, one worker (target <= 60 s)",
            setup_deliveries,
            after=lambda bench, state, conc: wait_for_tasks(bench),
        ),
    ]
    for row in rows:
        row.open_worker = state_client
    return rows


OUTBOUND_ROWS = (
    "capture_100_pages",
    "extract_1mb_html",
    "bookmark_create_capture",
    "changes_feed_10k",
    "write_webhooks_5",
    "webhook_deliveries_1k",
)
NEEDS_LOCAL = {
    "capture_100_pages",
    "bookmark_create_capture",
    "write_webhooks_5",
    "webhook_deliveries_1k",
}


def env(selected: Sequence[Scenario]) -> dict[str, str]:
    """Let the server under test reach the local page server / receiver, and only that."""
    if not NEEDS_LOCAL & {s.name for s in selected}:
        return {}
    return {"TIDDLY_OUTBOUND_ALLOWED_HOSTS": f"{HOST}:{local().port}"}


# --- targets --------------------------------------------------------------------------------------


def _row(rows: list[dict[str, Any]], name: str, lines: int | None = None) -> dict[str, Any] | None:
    return next(
        (r for r in rows if r["scenario"] == name and (lines is None or r["lines"] == lines)), None
    )


def targets(rows: list[dict[str, Any]]) -> str:
    checks: list[tuple[str, str, Any, str, bool | None]] = []

    def add(name: str, figure: str, value: Any, target: str, ok: bool | None) -> None:
        checks.append((name, figure, value, target, ok))

    if r := _row(rows, "capture_100_pages"):
        v = r.get("wall_s_all_done")
        add(r["scenario"], "wall s, all captured", v, "<= 60 s", v is not None and v <= 60)
    if r := _row(rows, "extract_1mb_html"):
        v = r.get("cpu_s_median")
        add(r["scenario"], "CPU s (median)", v, "<= 1 s", v is not None and v <= 1)
    if r := _row(rows, "bookmark_create_capture"):
        v = f"{r.get('p50_on_ms')} / {r.get('p50_off_ms')} ms = {r.get('ratio')} {r.get('ratio_95')}"
        add(r["scenario"], "p50 on / off [95%]", v, "1.0 in the interval", _within_noise(r))
    if r := _row(rows, "changes_feed_10k"):
        v = r.get("p50_ms") and round(r["p50_ms"] / 1000, 3)
        add(r["scenario"], "wall s, whole feed", v, "<= 2 s", bool(v) and v <= 2)
    if r := _row(rows, "write_webhooks_5"):
        v = f"{r.get('p50_hooks_ms')} / {r.get('p50_none_ms')} ms = {r.get('ratio')} {r.get('ratio_95')}"
        add(r["scenario"], "p50 5 hooks / none [95%]", v, "1.0 in the interval", _within_noise(r))
    if r := _row(rows, "webhook_deliveries_1k"):
        v = r.get("wall_s_all_delivered")
        add(r["scenario"], "wall s, all delivered", v, "<= 60 s", v is not None and v <= 60)
    if (r := _row(rows, "mcp_get_item", 10_000)) and r["concurrency"] == 1:
        v = r.get("rps")
        add("mcp_get_item 10k", "calls/s", v, ">= 60 (issue 22)", v is not None and v >= 60)
    if not checks:
        return ""
    lines = ["", "targets (issues 19, 21, 22):"]
    for name, figure, value, target, ok in checks:
        verdict = "-" if ok is None else ("ok" if ok else "MISSED")
        lines.append(f"  {name:<24} {figure:<26} {value!s:<44} {target:<20} {verdict}")
    return "\n".join(lines)


register(*scenarios())
register_env(env)
register_summary(targets)
