"""Do throttles hold across worker processes? Starts uvicorn with --workers 4 on a fresh SQLite
file (throttling on) and counts how many of 120 client registrations pass (limit 20/hour) and how
many of 400 fast REST writes pass before a 429. Usage: ``python bench/throttle_workers.py``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="tiddly-throttle-"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{work / 'db.sqlite3'}", "DJANGO_DEBUG": "0",
           "DJANGO_SECRET_KEY": "throttle-bench", "TIDDLY_CACHE_DIR": str(work / "cache"),
           "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}  # fmt: skip
    env.pop("CACHE_URL", None)
    py = sys.executable
    subprocess.run([py, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    out = subprocess.run(
        [py, "manage.py", "create_token", "t", "--name", "t", "--create-user"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    token = next(w for w in out.split() if w.startswith("tdly_"))
    server = subprocess.Popen([py, "-m", "uvicorn", "tiddly.asgi:application", "--port", str(port),
                               "--workers", "4", "--log-level", "warning"], cwd=ROOT, env=env)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, trust_env=False, timeout=30) as c:
            for _ in range(450):
                try:
                    if c.get("/api/").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
            body = {
                "redirect_uris": ["http://127.0.0.1:9/cb"],
                "token_endpoint_auth_method": "none",
            }
            regs = [c.post("/oauth/register", json=body).status_code for _ in range(120)]
            print(
                f"registrations: {regs.count(201)} of 120 passed (limit 20/hour), "
                f"{regs.count(429)} x 429"
            )
            h = {"Authorization": f"Bearer {token}"}
            writes = [c.post("/api/notes/", json={"title": f"n{i}", "content": "x"}, headers=h)
                      .status_code for i in range(400)]  # fmt: skip
            print(f"REST writes: {writes.count(201)} of 400 passed, {writes.count(429)} x 429")
    finally:
        server.terminate()
        server.wait(timeout=20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
