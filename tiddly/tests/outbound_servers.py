"""Hostile and friendly local HTTP servers (real sockets, 127.0.0.1, port 0) for outbound tests."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

PAGE = (
    "<html><head><title>Plain title</title>"
    '<meta property="og:title" content="OG title">'
    '<meta name="description" content="Meta description"></head>'
    "<body><nav>Home | About</nav><article><h1>Heading</h1>"
    "<p>First paragraph of the article with <a href='https://example.org/x'>a link</a>.</p>"
    "<p>Second paragraph, long enough to be kept by the extractor as main text of the page.</p>"
    "</article></body></html>"
)

# A body of 50 MB of zeros compresses to ~50 KB: a gzip bomb.
_BOMB = gzip.compress(b"\0" * 50_000_000, compresslevel=9)


class _Server(ThreadingHTTPServer):
    other_url: str = ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    counters: ClassVar[dict[str, int]] = {}
    seen: ClassVar[list[dict[str, str]]] = []
    # Bodies a test serves at paths of its own: path -> (content type, body).
    bodies: ClassVar[dict[str, tuple[str, bytes]]] = {}

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def _send(
        self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8", **extra: str
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in extra.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.seen.append({k.lower(): v for k, v in self.headers.items()} | {"path": self.path})
        path = self.path.split("?", 1)[0]
        if path in self.bodies:
            ctype, data = self.bodies[path]
            self._send(200, data, ctype)
        elif path == "/page":
            self._send(200, PAGE.encode())
        elif path.startswith("/hop/"):
            left = int(path.rsplit("/", 1)[1])
            if left == 0:
                self._send(200, b"<html><title>end</title><body>end of chain</body></html>")
            else:
                self._redirect(f"/hop/{left - 1}")
        elif path == "/to-private":
            self._redirect("http://10.0.0.5/secret")
        elif path == "/to-metadata":
            self._redirect("http://169.254.169.254/latest/meta-data/")
        elif path == "/to-other-port":
            server = self.server
            assert isinstance(server, _Server)
            self._redirect(server.other_url + "/page")
        elif path == "/bomb":
            self._send(200, _BOMB, Content_Encoding="gzip")
        elif path == "/gzip-small":
            self._send(200, gzip.compress(PAGE.encode()), Content_Encoding="gzip")
        elif path == "/big":
            size = 20_000_000
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            chunk = b"a" * 65536
            try:
                for _ in range(size // len(chunk) + 1):
                    self.wfile.write(chunk)
            except OSError:
                return
        elif path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(200):  # bounded: 200 bytes over 40 s at most
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                return
        elif path == "/trickle-headers":
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                for i in range(200):
                    self.wfile.write(f"X-Slow-{i}: y\r\n".encode())
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                return
        elif path == "/flaky":
            count = self.counters.get("flaky", 0) + 1
            self.counters["flaky"] = count
            if count == 1:
                self._send(503, b"busy", "text/plain", Retry_After="1")
            else:
                self._send(200, PAGE.encode())
        elif path == "/status/404":
            self._send(404, b"nope", "text/plain")
        elif path == "/status/429":
            self._send(429, b"slow down", "text/plain")
        elif path == "/plain":
            self._send(200, b"just text\nline 2\n", "text/plain; charset=utf-8")
        elif path == "/markdown":
            self._send(200, b"# Title\n\nSome *markdown*.\n", "text/markdown")
        elif path == "/markdown-links":
            body = b"# Links\n\n[run](javascript:alert(1)) [ok](https://example.com/)\n"
            self._send(200, body, "text/markdown")
        elif path == "/image":
            self._send(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "image/png")
        elif path == "/fake-pdf":
            self._send(200, b"this is not a pdf at all", "application/pdf")
        elif path == "/broken-html":
            self._send(
                200, b"<html><body><div><p>unclosed <b>tags <i>everywhere<table><tr><td>cell"
            )
        elif path == "/empty-html":
            self._send(200, b"", "text/html")
        elif path in ("/caf%C3%A9", "/wiki/B%C3%BCcher"):  # non-ASCII paths, as they arrive
            self._send(200, PAGE.encode())
        elif path == "/long-type":  # a media type longer than any column keeps
            self._send(200, b"data", "application/x-" + "y" * 300)
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length)
        self.seen.append({k.lower(): v for k, v in self.headers.items()} | {"path": self.path})
        self._send(200, data, "application/octet-stream")


class LocalServer:
    def __init__(self) -> None:
        handler: type[Handler] = type(
            "BoundHandler", (Handler,), {"counters": {}, "seen": [], "bodies": {}}
        )
        self.handler = handler
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def seen(self) -> list[dict[str, str]]:
        return self.handler.seen

    def serve(self, path: str, body: bytes, content_type: str) -> str:
        """Serve ``body`` at ``path``; returns its URL."""
        self.handler.bodies[path] = (content_type, body)
        return self.url + path

    @property
    def counters(self) -> dict[str, int]:
        return self.handler.counters

    def start(self) -> LocalServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def local_server() -> Iterator[LocalServer]:
    server = LocalServer().start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def allowed_server(settings: Any, *, timeout: float) -> Iterator[LocalServer]:
    """A local page server that the outbound guard lets through (SPEC §15 refuses 127.0.0.1
    unless allowed), with the fetch timeout the test needs."""
    with local_server() as srv:
        settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = [f"127.0.0.1:{srv.port}"]
        settings.TIDDLY_OUTBOUND_TIMEOUT = timeout
        yield srv
