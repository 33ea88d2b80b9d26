#!/usr/bin/env python
"""Benchmark: hostile import files of ~48 MB (SPEC §14: ≤ 1 GB on either database, ≤ 60 s on
PostgreSQL, a bounded report whatever the file holds).

Shapes: ``repeats`` (one URL a million times, Netscape), ``json-repeats`` (one item repeated,
Tiddly JSON), ``tags`` (one bookmark whose ``TAGS`` attribute is 40 MB), ``folders`` (a million
empty folders). Each import runs in a fresh child process on a freshly migrated database and
reports wall time, peak RSS and the size of the JSON report.

    .venv/bin/python bench/import_hostile.py [--database-url postgres://…/db] [--shape repeats]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone import child_main, fresh_database, run_child

SIZE = 48_000_000
SHAPES = ["repeats", "long-urls", "json-repeats", "tags", "folders"]
HEAD = (
    "<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<TITLE>Bookmarks</TITLE>\n<H1>Bookmarks</H1>\n<DL><p>\n"
)


def write_shape(shape: str, path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        if shape == "json-repeats":
            item = json.dumps(
                {"type": "bookmark", "title": "t" * 40, "url": "https://example.com/" + "x" * 1400}
            )
            count = SIZE // (len(item) + 1)
            out.write('{"format": "tiddly", "version": 1, "items": [')
            out.write(",".join([item] * count))
            out.write("]}")
            return
        out.write(HEAD)
        if shape == "repeats":
            line = '<DT><A HREF="https://example.com/same">Same</A>\n'
            out.write(line * (SIZE // len(line)))
        elif shape == "long-urls":
            line = f'<DT><A HREF="https://example.com/{"x" * 1400}">{"t" * 300}</A>\n'
            out.write(line * (SIZE // len(line)))
        elif shape == "tags":
            tags = ",".join(f"t{n}" for n in range(SIZE // 9))
            out.write(f'<DT><A HREF="https://example.com/" TAGS="{tags}">x</A>\n')
        elif shape == "folders":
            folder = "<DT><H3>f</H3>\n<DL><p>\n</DL><p>\n"
            out.write(folder * (SIZE // len(folder)))
        out.write("</DL><p>\n")


def child(path: str) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from content.portability.importer import import_items

    user, _ = get_user_model().objects.get_or_create(username="bench")
    started = time.perf_counter()
    with open(path, "rb") as stream:
        report = import_items(owner=user, stream=stream)
    body = json.dumps(report.as_dict())
    print(
        json.dumps(
            {
                "seconds": round(time.perf_counter() - started, 2),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                "report_bytes": len(body),
                "skipped_count": report.as_dict().get("skipped_count", len(report.skipped)),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", default="")
    parser.add_argument("--shape", action="append", choices=SHAPES)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shape or SHAPES:
            with fresh_database(args.database_url, Path(tmp) / f"{shape}.sqlite3") as env:
                path = Path(tmp) / f"{shape}.data"
                write_shape(shape, path)
                out = run_child(__file__, path, env, check=False, capture_output=True, timeout=600)
                size = path.stat().st_size // 1_000_000
                result = out.stdout.strip() or out.stderr.strip().splitlines()[-1]
                print(f"{shape:13} {size} MB  {result}", flush=True)


if __name__ == "__main__":
    child_main(child, main)
