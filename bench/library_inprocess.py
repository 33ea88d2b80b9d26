"""The library rows' server time, in-process (issue 30): GET a library page through Django's whole
request stack (middleware, view, template) with the test client — no HTTP, no client — on a
database a ``bench/run.py`` run left in place (``--db-name``), signed in as its ``bench`` user.

It imports the app from ``--app-dir``, so an older checkout is timed the same way:

    python bench/library_inprocess.py --database-url postgres://postgres@127.0.0.1:5432/tiddly_lib30bench
    python bench/library_inprocess.py --app-dir /work/wt/prev --database-url …   # the old code
    python bench/library_inprocess.py --path read:100000 --first    # a window's first render
    python bench/library_inprocess.py --path read:100000 --cold     # the process's first read
    python bench/library_inprocess.py --profile 30                  # cProfile, top 30 functions

``--path`` is a URL, ``list`` (``/library/``, the default) or ``read:LINES`` (the reading page of
the bench's ``bench read`` note of that many lines). ``--first`` times the first render of a
different window each request (``?start=``), instead of the same page again. Besides wall times
it prints the CPU spent per request by this process and by its PostgreSQL backend (one pooled
connection; read from /proc, so the database must run on this machine): on a shared machine the
steadier figures.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app-dir", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--path", default="list")
    parser.add_argument("-n", type=int, default=100, help="timed requests (after 5 warm-up ones)")
    parser.add_argument("--first", action="store_true")
    parser.add_argument("--profile", type=int, default=0, metavar="TOP")
    parser.add_argument(
        "--cold", action="store_true",
        help="time one request only, the process's first to this page (warmed up on another)",
    )  # fmt: skip
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_DEBUG", "0")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-library-inprocess-" + "x" * 40)
    os.environ["DJANGO_SETTINGS_MODULE"] = "tiddly.settings"
    # One pooled connection, so one PostgreSQL backend serves every request: its CPU is read.
    os.environ["TIDDLY_DB_POOL_MIN"] = os.environ["TIDDLY_DB_POOL_MAX"] = "1"
    sys.path.insert(0, args.app_dir)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    path = _path(args.path)
    starts = iter(range(1, 10**9, 200)) if args.first else None

    cpu: list[float] = []
    db_cpu: list[float] = []
    backend = _backend_pid()

    def get() -> float:
        url = f"{path}?start={next(starts)}" if starts else path
        begin, begin_cpu, begin_db = time.perf_counter(), time.process_time(), _cpu_ms(backend)
        response = client.get(url)
        took = (time.perf_counter() - begin) * 1000
        cpu.append((time.process_time() - begin_cpu) * 1000)
        db_cpu.append(_cpu_ms(backend) - begin_db)
        assert response.status_code == 200, (url, response.status_code)
        return took

    if args.cold:
        for _ in range(5):
            client.get(_path("read:100"))
        print(f"{args.path} ({args.app_dir}): first request {get():.1f} ms; "
              f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
        return
    for _ in range(5):
        get()
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.n):
            get()
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.profile)
        return
    cpu.clear()
    times = sorted(get() for _ in range(args.n))
    p95 = times[int(len(times) * 0.95) - 1]
    print(f"{args.path} ({args.app_dir}): n={len(times)} p50={statistics.median(times):.1f} ms "
          f"p95={p95:.1f} ms min={times[0]:.1f} ms; CPU per request (mean; /proc counts in "
          f"10 ms ticks): this process {statistics.mean(cpu):.1f} ms, the database's "
          f"{statistics.mean(db_cpu):.1f} ms "
          f"(backend {backend}, still {_backend_pid()}); load {os.getloadavg()[0]:.1f}")  # fmt: skip


def _backend_pid() -> int:
    from django.db import connection

    if connection.vendor != "postgresql":
        return 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _cpu_ms(pid: int) -> float:
    """User + system CPU of a local process (0 when there is none: SQLite runs in this one)."""
    if not pid:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def _path(spec: str) -> str:
    if spec == "list":
        return "/library/"
    if spec.startswith("read:"):
        from content.models import Note

        lines = spec.split(":", 1)[1]
        found = Note.objects.filter(title=f"bench read {lines}").values_list("pk", flat=True)
        if not found:
            raise SystemExit(f"no note 'bench read {lines}' in this database")
        return f"/library/note/{found[0]}/"
    return spec


if __name__ == "__main__":
    main()
