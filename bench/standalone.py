"""The frame of the standalone benchmark scripts (bench/revert_batches.py, share_404_timing.py,
import_hostile.py): a fresh database, the measurement in a child process, the database emptied.

A script defines ``child(arg)`` (runs with Django set up from the environment) and calls
``run_child`` from its ``main``, then ``child_main(child)`` under ``if __name__ == "__main__"``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def fresh_database(
    database_url: str, sqlite_path: Path, **extra_env: str
) -> Iterator[dict[str, str]]:
    """The environment of a migrated database: ``database_url`` (flushed afterwards), else a new
    SQLite file at ``sqlite_path``."""
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="tiddly.settings", **extra_env)
    env["DATABASE_URL"] = database_url or f"sqlite:///{sqlite_path}"
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    try:
        yield env
    finally:
        if database_url:
            flush = [sys.executable, "manage.py", "flush", "--noinput", "-v0"]
            subprocess.run(flush, cwd=ROOT, env=env, check=False)


def run_child(
    script: str, arg: object, env: dict[str, str], **run: Any
) -> subprocess.CompletedProcess[str]:
    """Run ``script --child arg`` (its ``child(arg)``) in the prepared environment."""
    command = [sys.executable, script, "--child", str(arg)]
    return subprocess.run(command, cwd=ROOT, env=env, text=True, **{"check": True, **run})


def run_with_count(script: str, option: str, default: int, **extra_env: str) -> None:
    """The ``main`` of a script measured at one size: ``--<option> N`` and ``--database-url``
    (default: a new SQLite file), then ``child(N)`` in a child process."""
    parser = argparse.ArgumentParser()
    parser.add_argument(f"--{option}", type=int, default=default)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_database(args.database_url, Path(tmp) / "bench.sqlite3", **extra_env) as env,
    ):
        run_child(script, getattr(args, option), env)


def child_main(child: Callable[[str], None], main: Callable[[], None]) -> None:
    """``script --child ARG`` runs ``child(ARG)`` with the project importable; else ``main()``."""
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.path.insert(0, str(ROOT))
        child(sys.argv[2])
    else:
        main()
