#!/usr/bin/env python
"""HTTP benchmark for the Tiddly notes API.

Starts its own server (uvicorn, one worker, DEBUG off) against a fresh SQLite file or a fresh
PostgreSQL database, creates notes of several sizes and measures the REST API over HTTP with a
Bearer token at several concurrency levels. Reports requests/s, p50/p95/p99 latency and the
server's peak RSS as a table on stdout and as JSON.

This file is the command line only: the server, database, row registry and timing loop are in
bench/harness.py, the rows in the modules of ``ROW_MODULES`` (bench/rows_*.py), the output in
bench/report.py. Adding a row: see the docstring of bench/harness.py.

See bench/README.md.
"""

from __future__ import annotations

import argparse
import atexit
import datetime as dt
import importlib
import json
import math
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # also when imported, not run

from harness import (
    BENCH_DB_NAME,
    ROOT,
    SCENARIOS,
    STOP,
    SUMMARIES,
    Bench,
    Scenario,
    Server,
    bench_env,
    free_port,
    log,
    percentile,
    prepare_database,
    redact,
    run_row,
    server_env,
    sqlite_journal_mode,
    wait_for_tasks,
)
from notetext import LINE_CHARS, LIST_WORD, TOKEN, make_note
from report import fmt, format_table, git, machine_info

# Row modules, imported in this order: each registers its rows, and the groups run in the order
# their first row was registered (the list corpus must be built before any large note exists).
ROW_MODULES = (
    "rows_lists",
    "rows_notes",
    "rows_agent",
    "rows_mcp",
    "rows_outbound",
    "rows_extract",
    "rows_library",
    "rows_background",
)
for _name in ROW_MODULES:
    importlib.import_module(_name)


def _int_list(s: str) -> list[int]:
    return [int(x.replace("_", "")) for x in s.split(",") if x.strip()]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL"),
        help="postgres://... server to create a fresh 'tiddly_bench' database on "
        "(dropped first); default: a fresh temporary SQLite file",
    )
    p.add_argument(
        "--db-name",
        default=BENCH_DB_NAME,
        help=f"PostgreSQL database to (re)create and use (default {BENCH_DB_NAME}); pick another "
        "to run beside someone else's benchmark",
    )
    p.add_argument("--sizes", type=_int_list, default=[100, 10_000, 100_000])
    p.add_argument("--concurrency", type=_int_list, default=[1, 8])
    p.add_argument("--quick", action="store_true", help="smoke run: a few requests per row")
    p.add_argument("--quick-requests", type=int, default=5)
    p.add_argument(
        "--only",
        type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
        help="comma-separated scenario names (see --list)",
    )
    p.add_argument("--list", action="store_true", help="list scenarios and exit")
    p.add_argument(
        "--list-notes",
        type=int,
        default=None,
        help="notes in the list_q corpus (default 1000, 200 with --quick)",
    )
    p.add_argument("--out", type=Path, help="JSON output (default bench/results/<db>-<date>.json)")
    p.add_argument(
        "--row-timeout",
        type=float,
        default=120,
        help="seconds after which a row stops issuing requests",
    )
    p.add_argument("--request-timeout", type=float, default=120)
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 if any row had unexpected responses, problems or was cut short",
    )
    p.add_argument(
        "--app-dir",
        type=Path,
        default=ROOT,
        help="checkout to benchmark (manage.py, tiddly.asgi); default: this repo",
    )
    p.add_argument("--keep-tmp", action="store_true", help="keep the temp dir (db, server log)")
    p.add_argument(
        "--wait-idle",
        action="store_true",
        help="before each row wait until the server's task queue is idle (default: no wait, "
        "as a user works: background work an earlier row caused runs during the next)",
    )
    p.add_argument(
        "--port", type=int, default=0, help="port for the server (default: any free port)"
    )
    p.add_argument("--self-test", action="store_true", help="check note generation and exit")
    args = p.parse_args(argv)
    if args.list_notes is None:
        args.list_notes = 200 if args.quick else 1000
    known = {s.name for s in SCENARIOS}
    if args.only and (unknown := set(args.only) - known):
        p.error(f"unknown scenario(s) {sorted(unknown)}; known: {', '.join(sorted(known))}")
    if not args.concurrency or min(args.concurrency) < 1 or max(args.concurrency) > 64:
        p.error("--concurrency values must be in 1..64")
    if not args.sizes or min(args.sizes) < 20:
        p.error("--sizes values must be >= 20")
    return args


def self_test() -> None:
    for lines in (20, 100, 101, 10_000, 100_000):
        t = make_note(lines, extra_markers=[f"rpl-x-w{w}-alpha" for w in range(1, 8)])
        rows = t.content.split("\n")
        assert rows[-1] == "", lines
        assert len(rows) - 1 == lines, lines
        assert all(len(r) == LINE_CHARS for r in rows[:-1]), lines
        assert len(t.content) == 60 * lines
        assert t.content.count(t.marker) == 1, lines
        assert t.marker in rows[t.marker_line - 1]
        assert abs(t.marker_line - (lines / 2 + 1)) <= 1.5
        assert t.content.count(TOKEN) == t.token_lines == lines // 10, lines
        assert all(TOKEN in rows[i - 1] for i in range(10, lines + 1, 10))
        for ln, m in t.extra.items():
            assert t.content.count(m) == 1, m
            assert m in rows[ln - 1], m
            assert ln % 10, ln
        assert len(set(rows[:-1])) == lines  # every line is different
        assert LIST_WORD not in t.content
    for vals in ([1.0], [1.0, 2.0], [3.0, 1.0, 2.0, 10.0], [float(i) for i in range(1, 1001)]):
        s = sorted(vals)
        if len(s) > 1:
            q = statistics.quantiles(s, n=100, method="inclusive")
            for p in (50, 95, 99):
                assert math.isclose(percentile(s, p), q[p - 1]), (vals, p)
    assert percentile([], 50) is None
    assert percentile([5.0], 99) == 5.0
    assert percentile([float(i) for i in range(1, 101)], 50) == 50.5
    print("self-test ok")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    app_dir = args.app_dir.resolve()
    if args.self_test:
        self_test()
        return 0
    scenarios = [s for s in SCENARIOS if not args.only or s.name in args.only]
    if args.list:
        for s in SCENARIOS:
            print(f"{s.name:<16} {s.description}")
        return 0

    # SIGTERM -> SystemExit, so the finally blocks below stop the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
    STOP.clear()
    workdir = Path(tempfile.mkdtemp(prefix="tiddly-bench-"))
    server: Server | None = None
    started = dt.datetime.now(dt.UTC)
    try:
        if not args.db_name.isidentifier():
            raise SystemExit(f"--db-name must be a plain identifier, not {args.db_name!r}")
        db_url, vendor, db_version = prepare_database(args.database_url, workdir, args.db_name)
        env = bench_env(db_url)
        env.update(server_env(scenarios))
        server = Server(env, workdir, args.port or free_port(), app_dir)
        atexit.register(server.stop)
        log(f"database: {vendor} {redact(db_url)}")
        server.manage("migrate", "--noinput")
        out = server.manage("create_token", "bench", "--name", "bench", "--create-user").strip()
        token = next((w for w in out.split() if w.startswith("tdly_")), out.splitlines()[-1])
        server.start()
        server.wait_ready(token)
        log(f"server pid {server.proc.pid} on {server.base_url}")
        bench = Bench(args, server, token)

        groups: dict[str, list[tuple[Scenario, int | None]]] = {}
        for sc in scenarios:
            for group, size in sc.plan(args.sizes):
                groups.setdefault(group, []).append((sc, size))

        rows: list[dict] = []
        rss_reset = True
        group_peak: dict[str, float] = {}
        after_group: dict[str, float] = {}
        overall = 0.0
        cumulative = 0.0
        web_group_peak: dict[str, float] = {}
        for group, items in groups.items():
            peak = web_peak = 0.0
            for sc, size in items:
                setup_started = time.perf_counter()
                state = sc.setup(bench, size)
                setup_s = time.perf_counter() - setup_started
                for conc in sc.concurrency or args.concurrency:
                    if not server.alive():
                        raise RuntimeError(f"server died:\n{server.log_tail()}")
                    if args.wait_idle:
                        waited = time.perf_counter()
                        for problem in wait_for_tasks(bench):
                            log(f"  {problem}")
                        if (waited := time.perf_counter() - waited) > 2:
                            log(f"  waited {waited:.0f} s for the background tasks to end")
                    before = server.hwm_kb() / 1024  # covers the setup since the last reset
                    peak, overall = max(peak, before), max(overall, before)
                    cumulative = max(cumulative, before)
                    rss_reset = server.reset_hwm() and rss_reset
                    log(f"{sc.name} lines={size} c={conc} ...")
                    row_started = time.perf_counter()
                    web_cpu, child_cpu = server.cpu_s()
                    row = run_row(bench, sc, size, conc, state)
                    web_cpu_after, child_cpu_after = server.cpu_s()
                    row["group"] = group
                    # How long the row took to run, its checks included (and its setup, shared
                    # by the scenario's concurrency levels, counted with the first).
                    row["setup_s"] = round(setup_s, 1)
                    row["elapsed_s"] = round(time.perf_counter() - row_started, 1)
                    setup_s = 0.0
                    row["peak_rss_mb"] = round(server.hwm_kb() / 1024, 1)
                    row["rss_after_mb"] = round(server.rss_kb() / 1024, 1)
                    row["web_peak_rss_mb"] = round(server.web_hwm_kb() / 1024, 1)
                    # CPU the web process spent per request (its own work, less sensitive to
                    # the machine's load than req/s) and what its children spent meanwhile.
                    row["web_cpu_ms"] = (
                        round((web_cpu_after - web_cpu) * 1000 / row["n"], 2) if row["n"] else None
                    )
                    row["children_cpu_s"] = round(max(0.0, child_cpu_after - child_cpu), 2)
                    web_peak = max(web_peak, row["web_peak_rss_mb"])
                    peak = max(peak, row["peak_rss_mb"])
                    overall = max(overall, peak)
                    cumulative = max(cumulative, peak)
                    rows.append(row)
                    log(
                        f"  n={row['n']} ok={row['ok']} {fmt(row['rps'])} req/s "
                        f"p50={fmt(row['p50_ms'])} p99={fmt(row['p99_ms'])} ms "
                        f"rss={row['peak_rss_mb']} MB setup {row['setup_s']} s, row "
                        f"{row['elapsed_s']} s" + (" PROBLEMS" if row["problems"] else "")
                    )
            group_peak[group] = round(peak, 1)
            web_group_peak[group] = round(web_peak, 1)
            after_group[group] = round(cumulative, 1)

        journal_mode = sqlite_journal_mode(db_url) if vendor == "sqlite" else None
        rss = {
            "reset": rss_reset,
            "groups": group_peak,
            "web_groups": web_group_peak,
            "after": after_group,
            "overall_peak_mb": round(overall, 1),
            "note": "per-row/per-group peaks: VmHWM reset via /proc/PID/clear_refs before each row"
            if rss_reset
            else "VmHWM could not be reset: values are cumulative",
        }
        result = {
            "meta": {
                "started_at": started.isoformat(timespec="seconds"),
                "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "db": {
                    "vendor": vendor,
                    "url": redact(db_url),
                    "server_version": db_version,
                    "sqlite_journal_mode": journal_mode,
                },
                "git": {
                    "commit": git(app_dir, "rev-parse", "HEAD"),
                    "dirty": bool(git(app_dir, "status", "--porcelain", "--untracked-files=no")),
                },
                "machine": machine_info(),
                "server": {"cmd": " ".join(server.cmd[1:]), "pid": server.proc.pid},
                "options": {
                    "sizes": args.sizes,
                    "concurrency": args.concurrency,
                    "quick": args.quick,
                    "only": args.only,
                    "list_notes": args.list_notes,
                    "app_dir": str(app_dir),
                    "row_timeout_s": args.row_timeout,
                    "wait_idle": args.wait_idle,
                    "line_chars": LINE_CHARS + 1,
                },
            },
            "rss": rss,
            "rows": rows,
        }
        out_path = args.out or ROOT / "bench" / "results" / (
            f"{vendor}-{started:%Y%m%d-%H%M%S}{'-quick' if args.quick else ''}.json"
        )
        out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_path.with_suffix(out_path.suffix + ".tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n")
        tmp.replace(out_path)
        print(format_table(rows, rss))
        for summary in SUMMARIES:
            print(summary(rows))
        db_line = f"{vendor} {db_version or ''}".strip()
        if journal_mode:
            db_line += f" (journal_mode={journal_mode})"
        print(f"\ndatabase: {db_line}; git {result['meta']['git']['commit'] or '-'}")
        print(f"\nJSON: {out_path}")
        bad = any(r["non_ok"] or r["truncated"] or r["problems"] for r in rows)
        return 1 if args.strict and bad else 0
    finally:
        if server is not None:
            server.stop()
        if args.keep_tmp:
            log(f"kept {workdir}")
        else:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted; server stopped")
        sys.exit(130)
