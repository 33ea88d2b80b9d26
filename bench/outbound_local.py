"""The local side of the outbound rows (bench/rows_outbound.py): realistic article pages to
capture and a webhook receiver that verifies every signature, on one threaded 127.0.0.1 server."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import random
import threading
import time
from typing import Any

from harness import HOST

ARTICLE_BYTES = 50_000
BIG_ARTICLE_BYTES = 1_000_000


# --- realistic article HTML -----------------------------------------------------------------------

_VOCAB = (
    "the of and to in is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their has would when if can more "
    "will into other time some could these two may then first any like new now only people also "
    "after way our most over even made many before must through back years where much your well "
    "down should because each just those how too little state good very make world still own "
    "research system network garden library archive measure river summer language history "
    "interface memory pattern window harbour engine ledger"
)
_WORDS = _VOCAB.split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 22))]
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _paragraph(rng: random.Random) -> str:
    text = " ".join(_sentence(rng) for _ in range(rng.randint(3, 7)))
    if rng.random() < 0.4:
        words = text.split(" ")
        k = rng.randrange(len(words) - 3)
        words[k] = f'<a href="https://example.org/{words[k].strip(".")}/{k}">{words[k]}'
        words[k + 2] += "</a>"
        text = " ".join(words)
    if rng.random() < 0.3:
        text = text.replace(" system ", " <em>system</em> ", 1).replace(
            " memory ", " <strong>memory</strong> ", 1
        )
    return f"<p>{text}</p>"


def article_html(key: str, size: int = ARTICLE_BYTES, seed: int = 19) -> str:
    """A news/blog-like page of about ``size`` bytes: head with meta/og tags, scripts and styles,
    navigation, a cookie banner, an article of headings, paragraphs, lists, a table and code, a
    sidebar, comments and a footer — what a readability extractor meets in the wild."""
    rng = random.Random(f"{seed}-{size}")
    head = (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<title>Field notes {key} | The Bench Gazette</title>"
        f'<meta name="description" content="A long read about gardens and systems ({key}).">'
        f'<meta property="og:title" content="Field notes {key}">'
        '<meta property="og:type" content="article">'
        "<style>" + "body{font:16px/1.5 serif}.nav a{margin:0 4px}" * 20 + "</style>"
        "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}"
        + "gtag('js',new Date());"
        * 10
        + "</script></head><body>"
        '<div class="cookie-banner">We use cookies. <button>Accept</button></div>'
        '<header><nav class="nav">'
        + "".join(f'<a href="/section/{i}">Section {i}</a>' for i in range(30))
        + "</nav></header><main><article>"
        f"<h1>Field notes {key}</h1><p class=byline>By A. Writer, 3 March 2026</p>"
    )
    tail = (
        "</article>"
        '<aside class="sidebar"><h3>Most read</h3><ul>'
        + "".join(f'<li><a href="/story/{i}">Story {i}</a></li>' for i in range(15))
        + "</ul></aside>"
        '<section class="comments"><h3>Comments</h3>'
        + "".join(f"<div class=comment><b>user{i}</b> Nice piece.</div>" for i in range(5))
        + "</section></main><footer><p>© The Bench Gazette</p>"
        + "".join(f'<a href="/legal/{i}">Legal {i}</a>' for i in range(10))
        + "</footer><script>console.log('bye')</script></body></html>"
    )
    parts: list[str] = []
    total = len(head) + len(tail)
    section = 0
    while total < size:
        section += 1
        block = [f"<h2>Part {section}: {_sentence(rng)[:-1]}</h2>"]
        block += [_paragraph(rng) for _ in range(rng.randint(3, 6))]
        if section % 3 == 0:
            block.append("<ul>" + "".join(f"<li>{_sentence(rng)}</li>" for _ in range(5)) + "</ul>")
        if section % 5 == 0:
            rows = "".join(
                f"<tr><td>{rng.choice(_WORDS)}</td><td>{rng.randint(1, 999)}</td></tr>"
                for _ in range(6)
            )
            block.append(f"<table><tr><th>name</th><th>value</th></tr>{rows}</table>")
        if section % 7 == 0:
            block.append("<pre><code>def f(x):\n    return x * 2\n</code></pre>")
        text = "".join(block)
        parts.append(text)
        total += len(text)
    return head + "".join(parts) + tail


# --- the local page server and webhook receiver ---------------------------------------------------


class Local:
    """One threaded HTTP server: ``GET /page/<key>`` serves an article, ``POST /hook/<name>``
    verifies the Standard Webhooks signature with the secret registered for ``name`` and answers
    200 (a bad signature is counted, still answered 200)."""

    def __init__(self) -> None:
        self.template = article_html("{KEY}")
        self.lock = threading.Lock()
        self.secrets: dict[str, str] = {}
        self.received: dict[str, set[str]] = {}  # hook name -> webhook-ids
        self.posts: dict[str, int] = {}  # hook name -> POSTs (repeats included)
        self.bad_signatures: dict[str, int] = {}
        self.verified: dict[str, int] = {}
        self.pages_served = 0
        self.arrived: dict[str, float] = {}  # item id -> perf_counter of its first delivery
        local = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if not self.path.startswith("/page/"):
                    self.send_error(404)
                    return
                body = local.template.replace("{KEY}", self.path[6:]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                with local.lock:
                    local.pages_served += 1

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                name = self.path.removeprefix("/hook/")
                ok = local.verify(name, self.headers, body)
                with local.lock:
                    local.posts[name] = local.posts.get(name, 0) + 1
                    local.received.setdefault(name, set()).add(self.headers.get("webhook-id", ""))
                    counter = local.verified if ok else local.bad_signatures
                    counter[name] = counter.get(name, 0) + 1
                    local.arrived.setdefault(_item_id(body), time.perf_counter())
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.httpd = http.server.ThreadingHTTPServer((HOST, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://{HOST}:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, name="bench-local", daemon=True).start()

    def verify(self, name: str, headers: Any, body: bytes) -> bool:
        """Standard Webhooks v1: HMAC-SHA256 over ``id.timestamp.body`` with the whsec_ key."""
        secret = self.secrets.get(name)
        msg_id, stamp = headers.get("webhook-id"), headers.get("webhook-timestamp")
        if not secret or not msg_id or not stamp or abs(time.time() - int(stamp)) > 300:
            return False
        key = base64.b64decode(secret.removeprefix("whsec_"))
        digest = hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
        expected = base64.b64encode(digest).decode()
        given = [
            s.split(",", 1)[1] for s in headers.get("webhook-signature", "").split() if "," in s
        ]
        return any(hmac.compare_digest(expected, g) for g in given) and bool(json.loads(body))

    def count(self, prefix: str) -> int:
        with self.lock:
            return sum(len(ids) for name, ids in self.received.items() if name.startswith(prefix))


def _item_id(body: bytes) -> str:
    try:
        return str(json.loads(body)["data"]["id"])
    except (ValueError, KeyError, TypeError):
        return ""


_LOCAL: Local | None = None


def local() -> Local:
    global _LOCAL
    if _LOCAL is None:
        _LOCAL = Local()
    return _LOCAL
