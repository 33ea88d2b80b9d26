"""Requests per second of the authenticated hot path: a small REST GET and an MCP tool call.

Starts uvicorn (one worker) on a fresh SQLite file, creates a user and an API token, and
runs each request in a loop from one client for a few seconds. It measures what every request
pays for authentication (token lookup, cache, revocation check), so keep the work per request
small. Usage: ``python bench/auth_rate.py --port 8741 --seconds 10``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "list_tags", "arguments": {}},
}


def _manage(env: dict[str, str], *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return out.stdout.decode().strip()


def _rate(client: httpx.Client, seconds: float, send: Callable[[], httpx.Response]) -> float:
    count, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        response = send()
        assert response.status_code == 200, response.text
        count += 1
    return count / seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8741)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "bench-" + "x" * 50,
        "TIDDLY_THROTTLE_ENABLED": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
    }
    _manage(env, "migrate", "--noinput")
    token = _manage(env, "create_token", "bench", "--create-user").splitlines()[-1]
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "uvicorn", "tiddly.asgi:application"),
            *("--port", str(args.port), "--no-access-log", "--log-level", "warning"),
        ],
        cwd=ROOT,
        env=env,
    )
    base = f"http://127.0.0.1:{args.port}"
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=base, headers=headers, trust_env=False) as client:
            for _ in range(100):
                try:
                    if client.get("/api/notes/").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            client.post("/api/notes/", json={"title": "bench", "tags": ["a"]})
            rest = _rate(client, args.seconds, lambda: client.get("/api/notes/?limit=5"))
            mcp = _rate(
                client,
                args.seconds,
                lambda: client.post("/mcp/content", json=CALL, headers=MCP_HEADERS),
            )
        print(f"REST GET /api/notes/?limit=5: {rest:.0f} req/s")
        print(f"MCP tools/call list_tags:     {mcp:.0f} req/s")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
