#!/usr/bin/env python
"""Benchmark: import 100 000 Netscape bookmarks and export them again, on PostgreSQL.

Creates (and finally drops) the database ``$BENCH_DB`` (default ``tiddly_h_pfix_bench``) on the
server of ``BENCH_PG`` (default ``postgres://postgres@127.0.0.1:5432``), migrates it, writes a
generated bookmark file (nested folders, tags, descriptions, some duplicates and ``javascript:`` links),
then runs each step in a fresh child process and reports its wall time and peak RSS:

- import: ``content.portability.importer.import_items`` on the file (one transaction);
- export: ``exporter.export_items`` as Netscape and as Tiddly JSON, written to /dev/null.

Targets (SPEC §14): import ≤ 60 s with peak RSS ≤ 500 MB; export ≤ 30 s.

    .venv/bin/python bench/portability.py [--count 100000] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = os.environ.get("BENCH_DB", "tiddly_h_pfix_bench")
SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "python",
    "django",
    "rust",
    "web",
    "news",
    "recipes",
    "travel",
    "music",
    "café",
]


def generate(path: Path, count: int) -> None:
    rng = random.Random(42)
    with path.open("w", encoding="utf-8") as out:
        out.write(
            "<!DOCTYPE NETSCAPE-Bookmark-file-1>\n"
            '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">\n'
            "<TITLE>Bookmarks</TITLE>\n<H1>Bookmarks</H1>\n<DL><p>\n"
            '<DT><H3 PERSONAL_TOOLBAR_FOLDER="true">Bookmarks bar</H3>\n<DL><p>\n'
        )
        per_folder = 500
        for start in range(0, count, per_folder):
            folder = f"{rng.choice(WORDS).title()} {start // per_folder}"
            out.write(f"<DT><H3>{folder}</H3>\n<DL><p>\n<DT><H3>Sub &amp; more</H3>\n<DL><p>\n")
            for n in range(start, min(start + per_folder, count)):
                url = f"https://example.com/{rng.choice(WORDS)}/{n}?ref=bench&amp;x={n % 7}"
                if n % 1000 == 999:
                    url = "javascript:void(0)"
                elif n % 500 == 499:
                    url = f"https://example.com/{n - 1}"  # probably new; exercises lookups
                tags = ",".join(rng.sample(WORDS, 2))
                out.write(
                    f'<DT><A HREF="{url}" ADD_DATE="{1600000000 + n}" '
                    f'LAST_MODIFIED="{1600000500 + n}" TAGS="{tags}">Page {n} — '
                    f"{rng.choice(WORDS)} &lt;{n}&gt;</A>\n"
                )
                if n % 3 == 0:
                    out.write(f"<DD>Description of bookmark {n} with some words.\n")
            out.write("</DL><p>\n</DL><p>\n")
        out.write("</DL><p>\n</DL><p>\n")


def psql(sql: str) -> None:
    subprocess.run(["psql", f"{SERVER}/postgres", "-q", "-c", sql], check=True)


def child(step: str, arg: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tiddly.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from content.portability import exporter, importer

    owner = get_user_model().objects.get(username="bench")
    started = time.perf_counter()
    begin = resource.getrusage(resource.RUSAGE_SELF)
    cpu_at_start = begin.ru_utime + begin.ru_stime
    result: dict[str, object] = {}
    if step == "import":
        path = Path(arg)
        with path.open("rb") as stream:
            report = importer.import_items(owner=owner, stream=stream, size=path.stat().st_size)
        result = {"created": report.created["bookmark"], "skipped": len(report.skipped)}
    else:
        export = exporter.export_items(owner=owner, format=arg)
        size = 0
        with open(os.devnull, "wb") as sink:
            for chunk in export.chunks:
                sink.write(chunk)
                size += len(chunk)
        result = {"bytes": size}
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result["seconds"] = round(time.perf_counter() - started, 2)
    # CPU of this process only (PostgreSQL's own work is not in it): on a shared machine the
    # wall time depends on the neighbours, this does not.
    result["python_cpu_seconds"] = round(usage.ru_utime + usage.ru_stime - cpu_at_start, 2)
    result["peak_rss_mb"] = round(usage.ru_maxrss / 1024, 1)
    result["load_average"] = round(os.getloadavg()[0], 1)
    print(json.dumps(result))


def run_step(step: str, arg: str, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", step, arg],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--keep", action="store_true", help="Do not drop the database.")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    env = {
        **os.environ,
        "DATABASE_URL": f"{SERVER}/{DB_NAME}",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "bench-only",
    }
    psql(f"DROP DATABASE IF EXISTS {DB_NAME}")
    psql(f"CREATE DATABASE {DB_NAME}")
    try:
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "-v0"], env=env, check=True)
        create = (
            "from django.contrib.auth import get_user_model as g; g().objects.create_user('bench')"
        )
        subprocess.run([*manage, "shell", "-c", create], env=env, check=True)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bookmarks.html"
            generate(path, args.count)
            size_mb = path.stat().st_size / 1e6
            rows = [("import netscape", run_step("import", str(path), env))]
        rows.append(("export netscape", run_step("export", "netscape", env)))
        rows.append(("export json", run_step("export", "json", env)))
    finally:
        if not args.keep:
            psql(f"DROP DATABASE IF EXISTS {DB_NAME}")
    print(f"{args.count} bookmarks, file {size_mb:.1f} MB, PostgreSQL")
    for name, row in rows:
        print(f"{name:16} {row}")


if __name__ == "__main__":
    main()
