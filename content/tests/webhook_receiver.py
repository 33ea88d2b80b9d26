"""A real local webhook receiver (http.server on port 0) that verifies Standard Webhooks
signatures with the ``standardwebhooks`` library, and plays scripted answers."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass
class Received:
    headers: dict[str, str]
    body: dict[str, Any]
    verified: bool


@dataclass
class Receiver:
    port: int
    secret: str = ""
    # Scripted answers, one per request: ("status", 200), ("sleep", seconds), ("close",),
    # ("redirect", url), ("big", status, body bytes). When empty, 200.
    script: list[tuple[Any, ...]] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                Webhook(receiver.secret).verify(raw, headers)
                verified = True
            except WebhookVerificationError:
                verified = False
            receiver.received.append(Received(headers, json.loads(raw), verified))
            step = receiver.script.pop(0) if receiver.script else ("status", 200)
            if step[0] == "sleep":
                time.sleep(step[1])
                step = ("status", 200)
            if step[0] == "close":
                self.close_connection = True
                self.connection.close()
                return
            self.send_response(step[1] if step[0] in ("status", "big") else 302)
            if step[0] == "redirect":
                self.send_header("Location", step[1])
            answer = b"x" * step[2] if step[0] == "big" else b"ok"
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            with contextlib.suppress(OSError):  # the sender may hang up without reading it
                self.wfile.write(answer)

    return Handler


@contextlib.contextmanager
def allowed_receiver(settings: Any) -> Iterator[Receiver]:
    """A receiver running for the block, on a port the outbound guard lets through (SPEC §15
    refuses 127.0.0.1 unless allowed)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    receiver = Receiver(port=server.server_address[1])
    server.RequestHandlerClass = _handler(receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = [f"127.0.0.1:{receiver.port}"]
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
