"""A local relay for .ci/conformance: adds ``Authorization: Bearer <token>`` to every request and
passes the answer back unchanged. The conformance suite's client sends no credentials, and every
Tiddly MCP call needs a token (SPEC §7), so without it each scenario would stop at 401.

    python .ci/conformance_proxy.py <upstream base URL> <token> <port>
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

UPSTREAM, TOKEN, PORT = sys.argv[1], sys.argv[2], int(sys.argv[3])
DROPPED_REQUEST = {"host", "content-length", "connection", "authorization"}
DROPPED_RESPONSE = {"content-length", "transfer-encoding", "connection", "date", "server"}


class Relay(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def relay(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in DROPPED_REQUEST}
        headers["Authorization"] = f"Bearer {TOKEN}"
        request = urllib.request.Request(
            UPSTREAM + self.path, data=body, headers=headers, method=self.command
        )
        answer_headers: Message
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status, answer_headers, data = answer.status, answer.headers, answer.read()
        except urllib.error.HTTPError as error:
            status, answer_headers, data = error.code, error.headers, error.read()
        self.send_response(status)
        for name, value in answer_headers.items():
            if name.lower() not in DROPPED_RESPONSE:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = relay


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", PORT), Relay).serve_forever()
