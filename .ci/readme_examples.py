#!/usr/bin/env python
"""Run the README's ```sh examples, in order, against a fresh server (issue 22: the README cannot drift).

The README's convention: a fenced ```sh block is a runnable example; anything a reader must adapt
first (``make run``, a reverse-proxy setup, a client's configuration) is ```bash, ```json or
```python and is not run. This script:

1. creates a fresh SQLite database in a temporary folder, the user ``alice`` (the name the README
   uses) and an API token for her;
2. starts ``uvicorn tiddly.asgi:application`` on a free port (the embedded task worker included, so
   capture, indexing and webhooks behave as under ``make run``; outbound fetches are limited to
   the allow-list, so an example URL is never fetched);
3. joins every ```sh block into one bash script, run with ``set -euo pipefail`` in the temporary
   folder (``.venv`` and ``manage.py`` are linked there, and ``DATABASE_URL`` is the server's, as
   the README asks of ``manage.py`` commands). The README's two placeholders are filled in:
   ``http://127.0.0.1:8000`` becomes the server's address and ``tdly_...`` the token.
   ``curl`` runs with ``--fail-with-body`` unless the example already handles the status itself
   (``-f`` or ``-w``), so any 4xx/5xx answer fails the run. ``HOOK_URL`` points the webhook
   example at a local receiver this script runs (answering 204), which the server may reach.

A block that still holds a placeholder (``…``, ``REPLACE_ME``, ``<username>``) is refused: it must
be ```bash. Exit status: bash's (non-zero on the first failing command), 2 on a refused block.

    .venv/bin/python .ci/readme_examples.py [--readme README.md] [--keep] [--port N] [--hook-port N]

Ports default to free ones (``README_EXAMPLES_PORT`` / ``README_EXAMPLES_HOOK_PORT`` too), so
runs side by side on one machine each pick their own.
"""

from __future__ import annotations

import argparse
import http.server
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER_ADDRESS = "http://127.0.0.1:8000"
PLACEHOLDER_TOKEN = "tdly_..."
FORBIDDEN = ("…", "REPLACE_ME", "<username>", "<user>")
FENCE = re.compile(r"^```(\w*)\s*$")

PRELUDE = r"""
set -euo pipefail
# curl fails on any 4xx/5xx unless the example checks the status itself (-f, --fail, -w).
curl() {
  local a
  for a in "$@"; do
    case "$a" in
      --fail|--fail-with-body|-w|--write-out) command curl "$@"; return ;;
      --*) ;;
      -*f*) command curl "$@"; return ;;
    esac
  done
  command curl --fail-with-body "$@"
}
"""


def sh_blocks(text: str) -> list[tuple[int, str]]:
    """The ```sh blocks of a Markdown text: (line number of the fence, body)."""
    blocks: list[tuple[int, str]] = []
    lang: str | None = None
    start = 0
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if lang is None and match:
            lang, start, body = match.group(1), number, []
        elif lang is not None and line.strip() == "```":
            if lang == "sh":
                blocks.append((start, "\n".join(body)))
            lang = None
        elif lang is not None:
            body.append(line)
    return blocks


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Receiver(http.server.BaseHTTPRequestHandler):
    """The webhook example's receiver: takes every delivery, answers 204."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def start_receiver(port: int) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [str(ROOT / ".venv/bin/python"), str(ROOT / "manage.py"), *args],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", default=str(ROOT / "README.md"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("README_EXAMPLES_PORT") or 0) or None
    )
    parser.add_argument(
        "--hook-port",
        type=int,
        default=int(os.environ.get("README_EXAMPLES_HOOK_PORT") or 0) or None,
    )
    args = parser.parse_args()

    blocks = sh_blocks(Path(args.readme).read_text(encoding="utf-8"))
    refused = [(n, p) for n, body in blocks for p in FORBIDDEN if p in body]
    for number, placeholder in refused:
        print(
            f"README line {number}: a ```sh block holds {placeholder!r}; make it ```bash or runnable"
        )
    if refused:
        return 2
    if not blocks:
        print("README has no ```sh blocks: nothing to check")
        return 2

    work = Path(tempfile.mkdtemp(prefix="tiddly-readme."))
    (work / ".venv").symlink_to(ROOT / ".venv")
    (work / "manage.py").symlink_to(ROOT / "manage.py")
    port = args.port or free_port()
    base = f"http://127.0.0.1:{port}"
    receiver = start_receiver(args.hook_port or 0)
    hook_host = f"127.0.0.1:{receiver.server_address[1]}"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{work / 'readme.sqlite3'}",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(32),
        "TIDDLY_OUTBOUND_ONLY_ALLOWED": "1",
        "TIDDLY_OUTBOUND_ALLOWED_HOSTS": hook_host,
        "HOOK_URL": f"http://{hook_host}/hooks/tiddly",
    }
    for name in ("TIDDLY_PUBLIC_URL", "CACHE_URL"):
        env.pop(name, None)

    print(f"== readme-examples: {len(blocks)} ```sh blocks, server {base}, folder {work} ==")
    manage(env, "migrate", "--noinput", "-v0")
    manage(
        {**env, "DJANGO_SUPERUSER_PASSWORD": secrets.token_urlsafe(16)},
        "createsuperuser",
        "--noinput",
        "--username",
        "alice",
        "--email",
        "alice@example.com",
    )
    token = manage(env, "create_token", "alice", "--name", "readme").strip().splitlines()[-1]

    log = open(work / "server.log", "w")  # noqa: SIM115 - closed in finally
    server = subprocess.Popen(
        [
            *(str(ROOT / ".venv/bin/python"), "-m", "uvicorn", "tiddly.asgi:application"),
            *("--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"),
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    status = 1
    try:
        wait_until_up(base, server)
        parts = [PRELUDE]
        for number, body in blocks:
            body = body.replace(PLACEHOLDER_ADDRESS, base).replace(PLACEHOLDER_TOKEN, token)
            parts.append(f'printf "\\n== README line {number} ==\\n"\n{body}\n')
        script = work / "readme.sh"
        script.write_text("\n".join(parts), encoding="utf-8")
        status = subprocess.run(["bash", str(script)], cwd=work, env=env).returncode
        print()
        if status:
            print(f"== readme-examples FAILED (exit {status}); script {script}; server log:")
            print((work / "server.log").read_text(encoding="utf-8")[-4000:])
        else:
            print("== readme-examples passed ==")
        return status
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        receiver.shutdown()
        if status == 0 and not args.keep:  # a failed run keeps its script and server log
            shutil.rmtree(work, ignore_errors=True)


def wait_until_up(base: str, server: subprocess.Popen[bytes]) -> None:
    for _ in range(150):
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            urllib.request.urlopen(f"{base}/api/", timeout=1)
            return
        except urllib.error.HTTPError:
            return  # 401 without a token: it is up
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not answer within 30 s")


if __name__ == "__main__":
    sys.exit(main())
