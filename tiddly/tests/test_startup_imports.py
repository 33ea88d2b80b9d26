"""What a web process loads at start-up: libraries only some requests need wait for them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_http_client_of_outbound_fetches_loads_with_the_first_fetch() -> None:
    """httpcore (and trio, where a test dependency installed it: 16 MB) is not imported by
    ``tiddly.asgi``; ``tiddly.outbound`` still works, loading it when it fetches."""
    code = (
        "import sys, tiddly.asgi, tiddly.outbound\n"
        "print(sorted(m for m in ('httpcore', 'trio') if m in sys.modules))\n"
    )
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="tiddly.settings", TIDDLY_EMBEDDED_WORKER="0")
    env.setdefault("DJANGO_SECRET_KEY", "startup-imports-" + "x" * 40)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
