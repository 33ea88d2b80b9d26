#!/usr/bin/env python
"""What one create or str-replace costs the web process's CPU, in-process (no socket, no client).

Creates a throwaway test database (``test_<name>`` of DATABASE_URL, or an in-memory SQLite
database without one), then through Django's test client either creates ``--count`` notes of
``--lines`` lines, or creates one and str-replaces a marker in it ``--count`` times (``--grow``:
the marker grows and shrinks by 14 characters, as ``replace_grow`` does). Prints the CPU per
request and, with ``--sql``, each statement's share of the time. ``--drop-trigger NAME`` drops
a trigger first (SQLite; to see what it costs); ``--file`` puts a SQLite database in a WAL file,
as the server runs it, instead of memory. Run it from the checkout to measure, e.g. a
``git worktree`` of an older commit:

    cd /path/to/checkout && python /path/to/bench/request_path.py --lines 100 --count 1000 --sql
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.getcwd())
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tiddly.settings")
os.environ.setdefault("TIDDLY_THROTTLE_ENABLED", "false")
os.environ.setdefault("TIDDLY_EMBEDDINGS", "off")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from notetext import make_note  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from tiddly.models import ApiToken  # noqa: E402

WARMUP = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=100)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--create", action="store_true", help="create notes (else str-replace)")
    parser.add_argument("--grow", action="store_true")
    parser.add_argument("--sql", action="store_true", help="time each statement")
    parser.add_argument("--drop-trigger", action="append", default=[])
    parser.add_argument(
        "--file",
        action="store_true",
        help="SQLite: a WAL file in a temp folder, checkpointed as the web server's (else memory)",
    )
    args = parser.parse_args()

    if args.file and connection.vendor == "sqlite":
        # What a write pays for its pages lands in the file and its log, not in memory.
        from tiddly.sqlite import base as sqlite_base

        folder = tempfile.TemporaryDirectory(prefix="request_path-")  # removed at exit
        connection.settings_dict["TEST"]["NAME"] = os.path.join(folder.name, "db.sqlite3")
        sqlite_base.web_process()
    setup_test_environment()
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    owner = get_user_model().objects.create_user("bench", password="x")
    _, token = ApiToken.issue(owner=owner, name="bench")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    for name in args.drop_trigger:
        with connection.cursor() as cursor:
            cursor.execute(f'DROP TRIGGER "{name}"')

    def post(title: str, content: str) -> str:
        body = json.dumps({"title": title, "content": content})
        r = client.post("/api/notes/", data=body, content_type="application/json")
        assert r.status_code == 201, r.content[:300]
        return str(r.json()["id"])

    if args.create:
        bodies = [make_note(args.lines).content for _ in range(args.count + WARMUP)]
        requests = iter(bodies)

        def one() -> None:
            post("bench", next(requests))
    else:
        words = ("alpha", "alpha-longer-longer") if args.grow else ("alpha", "bravo")
        note = post("bench", make_note(args.lines, marker=f"rpl-x-{words[0]}").content)
        state = [0]

        def one() -> None:
            old, new = words[state[0]], words[1 - state[0]]
            body = json.dumps({"old_str": f"rpl-x-{old}", "new_str": f"rpl-x-{new}"})
            url = f"/api/notes/{note}/str-replace/"
            r = client.patch(url, data=body, content_type="application/json")
            assert r.status_code == 200, r.content[:300]
            state[0] = 1 - state[0]

    for _ in range(WARMUP):
        one()
    # As the server does at start-up (tiddly.asgi): what exists now is out of the collector's way.
    gc.collect()
    gc.freeze()
    spent: dict[str, list[Any]] = collections.defaultdict(lambda: [0, 0.0])

    def timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            entry = spent[" ".join(sql.split())[:100]]
            entry[0] += 1
            entry[1] += time.perf_counter() - start

    start = time.process_time()
    for _ in range(args.count):
        if args.sql:
            with connection.execute_wrapper(timed):
                one()
        else:
            one()
    cpu = (time.process_time() - start) / args.count * 1000
    kind = "create" if args.create else "str-replace" + (" (grow)" if args.grow else "")
    print(f"{os.getcwd()}: {kind}, {args.lines} lines: {cpu:.3f} ms of CPU per request")
    for sql, (calls, seconds) in sorted(spent.items(), key=lambda kv: -kv[1][1])[:15]:
        print(f"{seconds / args.count * 1000:8.3f} ms {calls / args.count:5.1f}x  {sql}")


if __name__ == "__main__":
    main()
