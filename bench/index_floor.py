#!/usr/bin/env python
"""The least a long note's full-text index can cost, outside Tiddly: what SPEC §3.3 keeps in a
create's transaction, measured on the bare engines with the benchmark's own notes.

SQLite: the CPU of one transaction that writes a 100 000-line note (6 MB) into an FTS5 table
shaped like ``content_note_words`` (same tokenizer, ``automerge`` 8, 15 000-byte pieces), in a
fresh table and in one that grows by a note per step (its merges included), WAL file as the
server runs it. PostgreSQL (``--database-url``): the wall time of ``to_tsvector`` over a
10 000-line note (600 KB) with ``english`` (``tiddly_english`` adds ``unaccent``, which cost
nothing measurable) and with ``simple`` (the parser alone). Compare with a whole create's time
in ``bench/run.py --only create``: the index alone is more than the older commits' create.

    python bench/index_floor.py [--steps 16] [--database-url postgres://postgres@127.0.0.1:5432]

``--convoy N``: the same transaction's wall time while N threads hold the GIL, written a
statement per piece (executemany) and in one statement.

    python bench/index_floor.py --convoy 1
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notetext import make_note

PIECE = 15_000  # bytes, within the app's SMALLEST..LARGEST
TOKENIZE = "porter unicode61 remove_diacritics 2"  # content migration 0026


def sqlite_floor(steps: int) -> None:
    data = make_note(100_000).content.encode()
    pieces = [data[i : i + PIECE] for i in range(0, len(data), PIECE)]
    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite3.connect(Path(tmp) / "floor.sqlite3", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA wal_autocheckpoint=16384")
        db.execute(
            "CREATE VIRTUAL TABLE w USING fts5(title, description, body, content='', "
            f"tokenize='{TOKENIZE}')"
        )
        db.execute("INSERT INTO w(w, rank) VALUES ('automerge', 8)")
        spent = []
        for step in range(steps):
            rows = [(step * 4096 + n + 1, body) for n, body in enumerate(pieces)]
            start = time.process_time()
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT INTO w(rowid, body) VALUES (?, ?)", rows)
            db.execute("COMMIT")
            spent.append((time.process_time() - start) * 1000)
            if step % 4 == 3:
                db.execute("PRAGMA wal_checkpoint(PASSIVE)")  # the task workers' poller
        db.close()
    later = spent[len(spent) // 2 :]
    print(
        f"SQLite {sqlite3.sqlite_version}, FTS5 '{TOKENIZE}', one 6 MB note per transaction: "
        f"first {spent[0]:.1f} ms CPU; later (index grown to {steps} notes) median "
        f"{statistics.median(later):.1f}, mean {statistics.mean(later):.1f}, "
        f"max {max(later):.1f} ms"
    )


def sqlite_convoy(busy_threads: int, steps: int = 6) -> None:
    """The wall time of the same transaction while ``busy_threads`` threads hold the GIL (each
    parsing a 6 MB JSON body in a loop): written by executemany, a statement per piece, and by
    one INSERT ... SELECT over json_each (what content.search.pieces does)."""
    text = make_note(100_000).content
    data = text.encode()
    places = [(i, min(len(data), i + PIECE)) for i in range(0, len(data), PIECE)]
    payload = json.dumps({"content": text})
    for mode in ("executemany", "one statement"):
        stop = threading.Event()

        def busy(stop: threading.Event = stop) -> None:
            while not stop.is_set():
                json.loads(payload)

        threads = [threading.Thread(target=busy) for _ in range(busy_threads)]
        for thread in threads:
            thread.start()
        with tempfile.TemporaryDirectory() as tmp:
            db = sqlite3.connect(
                Path(tmp) / "convoy.sqlite3", isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE VIRTUAL TABLE w USING fts5(title, description, body, content='', "
                f"tokenize='{TOKENIZE}')"
            )
            wall = []
            for step in range(steps):
                start = time.perf_counter()
                db.execute("BEGIN IMMEDIATE")
                if mode == "executemany":
                    view = memoryview(data)
                    rows = [(step * 4096 + n + 1, view[a:b]) for n, (a, b) in enumerate(places)]
                    db.executemany("INSERT INTO w(rowid, body) VALUES (?, ?)", rows)
                else:
                    db.execute(
                        "INSERT INTO w(rowid, body) SELECT ? + j.key + 1, substr(?, "
                        "json_extract(j.value, '$[0]') + 1, json_extract(j.value, '$[1]') - "
                        "json_extract(j.value, '$[0]')) FROM json_each(?) j",
                        (step * 4096, data, json.dumps(places)),
                    )
                db.execute("COMMIT")
                wall.append((time.perf_counter() - start) * 1000)
            db.close()
        stop.set()
        for thread in threads:
            thread.join()
        print(
            f"SQLite, one 6 MB note per transaction, {busy_threads} thread(s) holding the GIL, "
            f"{mode}: median {statistics.median(wall):.0f} ms wall"
        )


def postgres_floor(url: str) -> None:
    import psycopg

    text = make_note(10_000).content
    with psycopg.connect(url, autocommit=True) as conn:
        for config in ("english", "simple"):
            spent = []
            for _ in range(7):
                start = time.perf_counter()
                conn.execute(
                    f"SELECT length(to_tsvector('{config}'::regconfig, %s))", [text]
                ).fetchone()
                spent.append((time.perf_counter() - start) * 1000)
            print(
                f"PostgreSQL to_tsvector('{config}') of a 10 000-line note ({len(text)} "
                f"characters): median {statistics.median(spent):.1f} ms wall"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--database-url", help="postgres://… (its postgres database is used)")
    parser.add_argument(
        "--convoy", type=int, metavar="N", help="only the GIL test, with N busy threads"
    )
    args = parser.parse_args()
    if args.convoy is not None:
        sqlite_convoy(args.convoy)
        return
    sqlite_floor(max(2, args.steps))
    if args.database_url:
        postgres_floor(args.database_url.rstrip("/") + "/postgres")


if __name__ == "__main__":
    main()
