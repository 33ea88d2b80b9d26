"""What a web process loads at start-up: libraries only some requests need wait for them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _last_line(code: str, cwd: Path = ROOT, **env_vars: str) -> str:
    """The last line ``code`` prints in a fresh interpreter (a web process's settings), run in
    ``cwd`` with ``env_vars`` added to the environment."""
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="tiddly.settings", TIDDLY_EMBEDDED_WORKER="0")
    env.setdefault("DJANGO_SECRET_KEY", "startup-imports-" + "x" * 40)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(ROOT), **env_vars},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_the_http_client_of_outbound_fetches_loads_with_the_first_fetch() -> None:
    """httpcore (and trio, where a test dependency installed it: 16 MB) is not imported by
    ``tiddly.asgi``; ``tiddly.outbound`` still works, loading it when it fetches."""
    code = (
        "import sys, tiddly.asgi, tiddly.outbound\n"
        "print(sorted(m for m in ('httpcore', 'trio') if m in sys.modules))\n"
    )
    assert _last_line(code) == "[]"


def _imports_of_a_web_process(database_url: str, tmp_path: Path) -> list[str]:
    """Which of PostgreSQL's modules ``tiddly.asgi`` loaded, and whether DRF saw them (its
    ``compat.postgres_fields``), in a fresh interpreter on ``database_url``."""
    code = (
        "import sys, tiddly.asgi, rest_framework.compat as compat\n"
        "names = ('psycopg', 'django.contrib.postgres', 'django.contrib.postgres.fields')\n"
        "print(sorted(m for m in names if m in sys.modules), compat.postgres_fields is not None)\n"
    )
    return _last_line(code, tmp_path, DATABASE_URL=database_url).split(" ")


def test_a_web_process_on_sqlite_leaves_postgresql_modules_unloaded(tmp_path: Path) -> None:
    """DRF would load django.contrib.postgres, and with it psycopg (~10 MB), on SQLite too."""
    out = _imports_of_a_web_process(f"sqlite:///{tmp_path}/db.sqlite3", tmp_path)
    assert out == ["[]", "False"]


def test_a_web_process_on_postgresql_loads_them(tmp_path: Path) -> None:
    """Importing ``tiddly.asgi`` does not connect, so no server is needed for this."""
    out = _imports_of_a_web_process("postgres://postgres@127.0.0.1:5432/unused", tmp_path)
    assert out[-1] == "True"
    assert "'psycopg'" in " ".join(out)


def test_the_markdown_renderer_loads_with_the_first_page() -> None:
    """markdown-it and nh3 (~4 MB) wait for the first shared or library page that renders."""
    code = (
        "import sys, tiddly.asgi\n"
        "before = sorted(m for m in ('markdown_it', 'nh3') if m in sys.modules)\n"
        "from content.text.markdown_html import markdown_to_html\n"
        "html = markdown_to_html('# Hi <script>x</script> [a](javascript:x)')\n"
        "print(before, html.count('<h1>'), '<script>' in html, 'href=\"javascript' in html)\n"
    )
    assert _last_line(code) == "[] 1 False False"
