#!/usr/bin/env python
"""What PostgreSQL spends on one note's INSERT and commit, without Django: the server's side of
a create (the triggers, indexes and write-ahead log of each checkout's schema).

Runs against a database with a checkout's schema and a user in it, such as the ``test_<name>``
database ``bench/request_path.py`` leaves behind; it adds notes there (a throwaway database):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/rp python bench/request_path.py --create
    python bench/pg_note_insert.py postgres://postgres@127.0.0.1:5432/test_rp --lines 100
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notetext import make_note

INSERT = (
    "INSERT INTO content_note (id, owner_id, title, description, content, created_at, "
    "updated_at, last_used_at) VALUES (%s, %s, %s, %s, %s, now(), now(), now())"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("--lines", type=int, default=100)
    parser.add_argument("--count", type=int, default=400)
    args = parser.parse_args()
    body = make_note(args.lines).content
    with psycopg.connect(args.url) as conn, conn.cursor() as cur:
        cur.execute("SELECT id FROM auth_user ORDER BY id LIMIT 1")
        row = cur.fetchone()
        if row is None:
            raise SystemExit("no user in this database: run bench/request_path.py first")
        owner = row[0]

        def run(count: int) -> tuple[float, float]:
            cur.execute("SELECT pg_current_wal_insert_lsn()")
            lsn = cur.fetchone()[0]  # type: ignore[index]
            conn.commit()
            start = time.perf_counter()
            for n in range(count):
                cur.execute(INSERT, [uuid.uuid4(), owner, f"Bench note {n}", "a note", body])
                conn.commit()
            spent = (time.perf_counter() - start) / count * 1000
            cur.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s)", [lsn])
            wal = float(cur.fetchone()[0]) / count  # type: ignore[index]
            conn.commit()
            return spent, wal

        run(args.count // 2)  # warm-up
        spent, wal = run(args.count)
    print(f"{args.lines} lines: {spent:.3f} ms per INSERT and commit, {wal:.0f} bytes of WAL")


if __name__ == "__main__":
    main()
