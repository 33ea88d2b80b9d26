"""A row for extraction in a box (issue 28, SPEC §15 round 4): heavy `page_html` creates while
other requests run. Run it alone with ``python bench/run.py --only page_html_heavy_creates``.

| row | figure | target |
| --- | --- | --- |
| `page_html_heavy_creates` | two concurrent `POST /api/bookmarks/` with a 4.5 MB `page_html` of 100 000 links while another user lists and writes notes in a loop: the creates' wall s, the other requests' max and p50 ms and non-2xx count, and the web process's RSS before, at the end and after (MB; the extraction workers' RSS apart); meanwhile a third user writes a note every half second and polls the feed: s from each 201 until its change is in it (`feed_max_s`) | creates ≤ 15 s; other requests 2xx within 1 s; web RSS back within 100 MB; feed ≤ 3 s |

The web process is the server's own pid (uvicorn, one worker); its children (the extraction
workers of `tiddly/sandbox.py`) are reported apart as `children_rss_mb`.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Any

import httpx
from harness import Bench, Call, Outcome, Scenario, _status_kb, register, register_summary
from rows_outbound import feed_end, one_shot, seconds_to_feed, skip_warmup, user_client

LINKS = 100_000


def many_links(count: int = LINKS) -> str:
    """About 4.5 MB of nothing but links (the issue's page, under the 5 MB page_html cap)."""
    links = "".join(f'<a href="https://ex.org/{i}">link {i}</a> ' for i in range(count))
    return f"<html><head><title>Links</title></head><body><div>{links}</div></body></html>"


def _web_rss_mb(bench: Bench) -> tuple[float, float]:
    """(the web process's RSS, its children's RSS summed), MB."""
    pids = bench.server.pids()
    if not pids:
        return 0.0, 0.0
    own = _status_kb(pids[0], "VmRSS") / 1024
    children = sum(_status_kb(p, "VmRSS") for p in pids[1:]) / 1024
    return round(own, 1), round(children, 1)


def setup_heavy(bench: Bench, size: int | None) -> dict[str, Any]:
    return {
        # One client per create: the harness's clients hold one connection each.
        "creators": [user_client(bench, "bench_heavy_html") for _ in range(2)],
        "other": user_client(bench, "bench_heavy_other"),
        "feed": user_client(bench, "bench_heavy_feed"),
        "html": many_links(),
        "report": {},
    }


def op_heavy(call: Call) -> Outcome:
    if (skip := skip_warmup(call)) is not None:
        return skip
    state = call.state
    bench = call.bench
    other: httpx.Client = state["other"]
    other.get("/api/notes/").raise_for_status()  # warm
    time.sleep(1)
    rss_before, children_before = _web_rss_mb(bench)
    creates: list[tuple[int, float, str]] = []

    def create(n: int) -> None:
        start = time.perf_counter()
        try:
            r = state["creators"][n].post(
                "/api/bookmarks/",
                json={"url": f"https://intranet.example/heavy-{n}", "page_html": state["html"]},
                timeout=900,
            )
            status = r.json().get("capture", {}).get("status", "") if r.status_code == 201 else ""
            creates.append((r.status_code, time.perf_counter() - start, status))
        except httpx.HTTPError as exc:
            creates.append((0, time.perf_counter() - start, type(exc).__name__))

    threads = [threading.Thread(target=create, args=(n,)) for n in range(2)]
    feed_lags: list[float | None] = []
    watcher = threading.Thread(target=_watch_feed, args=(state["feed"], threads, feed_lags))
    start = time.perf_counter()
    for t in threads:
        t.start()
    watcher.start()
    latencies: list[float] = []
    bad: dict[int, int] = {}
    i = 0
    peak_rss = rss_before
    while any(t.is_alive() for t in threads):
        i += 1
        t0 = time.perf_counter()
        try:
            if i % 2:
                r = other.get("/api/notes/", params={"limit": 5}, timeout=900)
            else:
                r = other.post("/api/notes/", json={"title": f"n{i}", "content": "x"}, timeout=900)
            code = r.status_code
        except httpx.HTTPError:
            code = 0
        latencies.append(time.perf_counter() - t0)
        if not 200 <= code < 300:
            bad[code] = bad.get(code, 0) + 1
        peak_rss = max(peak_rss, _web_rss_mb(bench)[0])
        time.sleep(0.05)
    for t in [*threads, watcher]:
        t.join()
    wall = time.perf_counter() - start
    rss_end, children_end = _web_rss_mb(bench)
    time.sleep(3)
    rss_after, children_after = _web_rss_mb(bench)
    state["report"].update(
        creates=[
            {"status": s, "seconds": round(sec, 2), "capture": c} for s, sec, c in sorted(creates)
        ],
        creates_max_s=round(max(sec for _, sec, _ in creates), 2),
        wall_s=round(wall, 2),
        other_requests=len(latencies),
        other_max_ms=round(max(latencies) * 1000, 1) if latencies else None,
        other_p50_ms=round(statistics.median(latencies) * 1000, 1) if latencies else None,
        other_non_2xx=bad,
        web_rss_before_mb=rss_before,
        web_rss_peak_mb=peak_rss,
        web_rss_end_mb=rss_end,
        web_rss_after_3s_mb=rss_after,
        web_rss_growth_mb=round(rss_after - rss_before, 1),
        children_rss_mb=[children_before, children_end, children_after],
        feed_writes=len(feed_lags),
        feed_max_s=max((v for v in feed_lags if v is not None), default=None),
        feed_unseen=sum(v is None for v in feed_lags),
    )
    problems = []
    if any(s != 201 for s, _, _ in creates):
        problems.append(f"creates answered {[s for s, _, _ in creates]}")
    if not feed_lags or None in feed_lags:
        problems.append(f"a third user's writes in the feed: {feed_lags}")
    return Outcome(True, 200, problem="; ".join(problems) or None)


def _watch_feed(
    client: httpx.Client, creates: list[threading.Thread], lags: list[float | None]
) -> None:
    """A third user writes a note every half second while the creates run and polls the feed
    until each one's change is in it: seconds from each 201 (None: not within 60 s)."""
    since = feed_end(client)
    time.sleep(0.5)  # the creates are under way
    while any(t.is_alive() for t in creates):
        r = client.post("/api/notes/", json={"title": "feed", "content": "x"}, timeout=900)
        if r.status_code != 201:
            lags.append(None)
            continue
        seconds, since = seconds_to_feed(client, r.json()["id"], since, time.perf_counter(), 60)
        lags.append(seconds)
        time.sleep(0.5)


def targets(rows: list[dict[str, Any]]) -> str:
    row = next((r for r in rows if r.get("scenario") == "page_html_heavy_creates"), None)
    if row is None:
        return ""
    creates, other = row.get("creates_max_s"), row.get("other_max_ms")
    growth, bad = row.get("web_rss_growth_mb"), row.get("other_non_2xx")
    feed, unseen = row.get("feed_max_s"), row.get("feed_unseen")
    checks = [
        ("creates max s", creates, "<= 15 s", creates is not None and creates <= 15),
        ("other max ms", other, "<= 1000 ms", other is not None and other <= 1000 and not bad),
        ("web RSS growth MB", growth, "<= 100 MB", growth is not None and growth <= 100),
        ("feed max s", feed, "<= 3 s", feed is not None and feed <= 3 and not unseen),
    ]
    lines = ["", "targets (issue 28, heavy page_html creates):"]
    for figure, value, target, ok in checks:
        lines.append(f"  {figure:<24} {value!s:<12} {target:<12} {'ok' if ok else 'MISSED'}")
    return "\n".join(lines)


def scenarios() -> list[Scenario]:
    return [
        one_shot(
            "page_html_heavy_creates",
            op_heavy,
            "issue 28: two concurrent creates with a 4.5 MB page_html of 100 000 links while "
            "another user lists and writes: creates' s, others' max ms, web RSS growth",
            setup_heavy,
        )
    ]


register(*scenarios())
register_summary(targets)
