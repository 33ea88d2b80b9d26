#!/usr/bin/env python
"""HTTP benchmark for the Tiddly notes API.

Starts its own server (uvicorn, one worker, DEBUG off) against a fresh SQLite file or a fresh
PostgreSQL database, creates notes of several sizes and measures the REST API over HTTP with a
Bearer token at several concurrency levels. Reports requests/s, p50/p95/p99 latency and the
server's peak RSS as a table on stdout and as JSON.

Adding a row: write an ``op`` (one request, returns an ``Outcome``), optionally a ``setup``
(state shared by all rows of that scenario and size) and an ``after`` check, and append a
``Scenario`` to ``SCENARIOS``. Scenarios that need another client (e.g. an MCP session) pass
``open_worker``: a context manager factory yielding the per-worker client given to ``op``.

See bench/README.md.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import dataclasses
import datetime as dt
import importlib.metadata
import itertools
import json
import math
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

ROOT = Path(__file__).resolve().parent.parent
APP_DIR = ROOT  # where manage.py lives (--app-dir)
HOST = "127.0.0.1"
BENCH_DB_NAME = "tiddly_bench"
STOP = threading.Event()  # set on Ctrl-C / SIGTERM: workers stop issuing requests

# Note text -----------------------------------------------------------------------------------

LINE_CHARS = 59  # + "\n" = 60 characters per line
TOKEN = "zqxrepeat"  # on every 10th line
LIST_WORD = "quokkabench"  # in every 5th note of the list corpus
_WORDS_TEXT = (
    "apple bridge candle dolphin ember forest garden harbor island jungle kettle lantern "
    "meadow needle orchard pebble quiet ribbon saddle timber umbrella velvet willow yonder "
    "zenith amber basket cobalt drizzle engine falcon gravel hollow ivory jasper kindle ledger "
    "marble nectar oyster parcel quartz rocket silver tundra upland violet walnut yellow "
    "zephyr anchor button"
)
WORDS = _WORDS_TEXT.split()


def _filler_lines(count: int = 997, seed: int = 12345) -> list[str]:
    """Deterministic filler fragments, each long enough to fill a line."""
    state = seed
    out = []
    for _ in range(count):
        words = []
        while sum(len(w) + 1 for w in words) < LINE_CHARS:
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF
            words.append(WORDS[state % len(WORDS)])
        out.append(" ".join(words))
    return out


FILLER = _filler_lines()


@dataclasses.dataclass(frozen=True)
class NoteText:
    content: str
    lines: int
    marker: str  # unique string on exactly one line, in the middle
    marker_line: int  # 1-based
    token: str
    token_lines: int  # number of lines containing ``token`` (once each)
    extra: dict[int, str]  # 1-based line -> extra unique marker string on that line


def _line(n: int, head: str = "") -> str:
    text = f"L{n:06d} {head}{FILLER[(n * 7919) % len(FILLER)]}"
    return text[:LINE_CHARS].rstrip().ljust(LINE_CHARS, ".")


def make_note(
    lines: int, *, marker: str | None = None, extra_markers: Sequence[str] = ()
) -> NoteText:
    """A note of ``lines`` lines of 60 characters (newline included).

    One unique marker line sits in the middle (line ``lines // 2 + 1``); ``TOKEN`` is on every
    10th line (10, 20, ...); ``extra_markers`` go on the next non-token lines after the marker.
    Markers must not contain one another, ``TOKEN`` or ``LIST_WORD``.
    """
    if lines < 1:
        raise ValueError("lines must be >= 1")
    marker = marker or f"mrk-{uuid.uuid4().hex[:10]}"
    marker_line = lines // 2 + 1
    if marker_line % 10 == 0:
        marker_line += 1 if marker_line < lines else -1
    special: dict[int, str] = {marker_line: marker}
    extra: dict[int, str] = {}
    n = marker_line
    for m in extra_markers:
        n += 1
        while n % 10 == 0:
            n += 1
        if n > lines:
            raise ValueError(f"note of {lines} lines is too short for {len(extra_markers)} markers")
        special[n] = m
        extra[n] = m
    out = []
    token_lines = 0
    for i in range(1, lines + 1):
        if i in special:
            out.append(_line(i, special[i] + " "))
        elif i % 10 == 0:
            out.append(_line(i, TOKEN + " "))
            token_lines += 1
        else:
            out.append(_line(i))
    content = "\n".join(out) + "\n"
    return NoteText(content, lines, marker, marker_line, TOKEN, token_lines, extra)


# Statistics ----------------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], p: float) -> float | None:
    """Linear-interpolation percentile (numpy's default, statistics' 'inclusive')."""
    if not sorted_values:
        return None
    if len(sorted_values) == 1:
        return sorted_values[0]
    k = (len(sorted_values) - 1) * p / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


# Server --------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _proc_tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo and len(pids) < 256:
        p = todo.pop()
        pids.append(p)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{p}/task"):
                with contextlib.suppress(OSError):
                    todo += [
                        int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split()
                    ]
    return pids


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class Server:
    def __init__(self, env: dict[str, str], workdir: Path, port: int, app_dir: Path = ROOT):
        self.env = env
        self.app_dir = app_dir
        self.port = port
        self.base_url = f"http://{HOST}:{port}"
        self.log_path = workdir / "server.log"
        self.proc: subprocess.Popen | None = None
        self.cmd = [
            sys.executable, "-m", "uvicorn", "tiddly.asgi:application",
            "--host", HOST, "--port", str(port), "--workers", "1",
            "--no-access-log", "--log-level", "warning",
        ]  # fmt: skip

    def manage(self, *args: str, timeout: float = 300) -> str:
        res = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=self.app_dir,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if res.returncode != 0:
            raise RuntimeError(
                f"manage.py {' '.join(args)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}"
            )
        return res.stdout

    def start(self) -> None:
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            self.cmd, cwd=self.app_dir, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        log.close()

    def wait_ready(self, token: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        with make_client(self.base_url, token, timeout=5) as c:
            while time.monotonic() < deadline:
                if self.proc is None or self.proc.poll() is not None:
                    raise RuntimeError(f"server exited early:\n{self.log_tail()}")
                try:
                    r = c.get("/api/notes/")
                    if r.status_code == 200:
                        return
                    last = f"HTTP {r.status_code}: {r.text[:300]}"
                except httpx.HTTPError as e:
                    last = repr(e)
                time.sleep(0.2)
        raise RuntimeError(f"server not ready after {timeout}s ({last}):\n{self.log_tail()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pids(self) -> list[int]:
        return _proc_tree(self.proc.pid) if self.alive() else []

    def hwm_kb(self) -> int:
        """Peak RSS (VmHWM) summed over the server process and its children."""
        return sum(_status_kb(p, "VmHWM") for p in self.pids())

    def rss_kb(self) -> int:
        return sum(_status_kb(p, "VmRSS") for p in self.pids())

    def reset_hwm(self) -> bool:
        """Reset VmHWM to the current RSS (Linux >= 4.0: write 5 to clear_refs)."""
        pids = self.pids()
        try:
            for p in pids:
                Path(f"/proc/{p}/clear_refs").write_text("5")
        except OSError:
            return False
        return bool(pids)

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no server log)"

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def make_client(base_url: str, token: str, timeout: float = 120) -> httpx.Client:
    return httpx.Client(
        base_url=base_url,
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx.Timeout(timeout),
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        trust_env=False,  # never go through a proxy: all traffic is to 127.0.0.1
    )


# Database ------------------------------------------------------------------------------------


def redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


def prepare_database(
    url: str | None, workdir: Path, db_name: str = BENCH_DB_NAME
) -> tuple[str, str, str | None]:
    """Return (DATABASE_URL for the server, vendor, server version)."""
    if not url:
        return f"sqlite:///{workdir / 'db.sqlite3'}", "sqlite", None
    scheme = urlsplit(url).scheme
    if scheme.startswith("sqlite"):
        return url, "sqlite", None
    if scheme not in ("postgres", "postgresql", "pgsql"):
        raise SystemExit(f"unsupported --database-url scheme {scheme!r}")
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        version = conn.execute("SHOW server_version").fetchone()[0]
        try:
            conn.execute(f"DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")
        except psycopg.errors.SyntaxError:  # PostgreSQL < 13
            conn.execute(f"DROP DATABASE IF EXISTS {db_name}")
        conn.execute(f"CREATE DATABASE {db_name}")
    return urlunsplit(urlsplit(url)._replace(path=f"/{db_name}")), "postgresql", version


def sqlite_journal_mode(url: str) -> str | None:
    """The journal mode of the SQLite file behind ``url`` (WAL or not matters for writes)."""
    import sqlite3

    path = urlsplit(url).path
    path = path[1:] if path.startswith("//") else path  # sqlite:////abs -> /abs
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            return conn.execute("PRAGMA journal_mode").fetchone()[0]
    except sqlite3.Error:
        return None


# Scenarios -----------------------------------------------------------------------------------


@dataclasses.dataclass
class Outcome:
    ok: bool
    status: int
    nbytes: int = 0
    problem: str | None = None  # a correctness finding (reported, does not by itself fail)
    detail: str | None = None  # body snippet of an unexpected response


@dataclasses.dataclass
class Call:
    bench: Bench
    client: Any  # whatever the scenario's open_worker yields (an httpx.Client by default)
    worker: int
    i: int  # request index; negative during warm-up
    state: Any
    warmup: bool


def http_outcome(r: httpx.Response, expect: int, problem: str | None = None) -> Outcome:
    ok = r.status_code == expect
    detail = None if ok else r.text[:300]
    return Outcome(ok, r.status_code, len(r.content), problem, detail)


def default_count(size: int | None) -> int:
    return 200 if size is None or size <= 10_000 else 40


@dataclasses.dataclass
class Scenario:
    name: str
    op: Callable[[Call], Outcome]
    description: str = ""
    setup: Callable[[Bench, int | None], Any] = lambda bench, size: None
    after: Callable[[Bench, Any, int], list[str]] | None = None  # post-row checks -> problems
    sized: bool = True  # run once per --sizes entry
    sizes: tuple[int, ...] | None = None  # fixed sizes instead of --sizes
    group: str | None = None  # RSS group (default: "<size> lines", or the name if unsized)
    concurrency: tuple[int, ...] | None = None  # fixed levels instead of --concurrency
    count: Callable[[int | None], int] = default_count
    warmup: int = 2
    open_worker: Callable[[Bench], contextlib.AbstractContextManager] | None = None
    report: Callable[[Bench, Any], dict] | None = None  # extra figures for the row's JSON

    def plan(self, sizes: Sequence[int]) -> list[tuple[str, int | None]]:
        if not self.sized:
            return [(self.group or self.name, None)]
        return [(self.group or f"{s} lines", s) for s in (self.sizes or sizes)]


# -- create


@dataclasses.dataclass
class CreateState:
    content_json: bytes
    size: int

    def body(self, i: int, worker: int) -> bytes:
        title = json.dumps(f"bench create {self.size} w{worker} #{i}").encode()
        return b'{"title": %b, "content": %b}' % (title, self.content_json)


JSON_HEADERS = {"Content-Type": "application/json"}


def setup_create(bench: Bench, size: int | None) -> CreateState:
    assert size is not None
    return CreateState(json.dumps(make_note(size).content).encode(), size)


def op_create(call: Call) -> Outcome:
    st: CreateState = call.state
    r = call.client.post("/api/notes/", content=st.body(call.i, call.worker), headers=JSON_HEADERS)
    problem = None
    if call.warmup and r.status_code == 201 and "id" not in r.json():
        problem = "create response has no id"
    return http_outcome(r, 201, problem)


# -- reads on a shared note


@dataclasses.dataclass
class NoteRef:
    id: str
    text: NoteText


def setup_read(bench: Bench, size: int | None) -> NoteRef:
    assert size is not None
    return bench.note(size, "read")


def op_get_full(call: Call) -> Outcome:
    ref: NoteRef = call.state
    r = call.client.get(f"/api/notes/{ref.id}/")
    problem = None
    if call.warmup and r.status_code == 200 and r.json().get("content") != ref.text.content:
        problem = "full GET content differs from what was posted"
    return http_outcome(r, 200, problem)


PARTIAL_LINES = 50


def op_get_partial(call: Call) -> Outcome:
    ref: NoteRef = call.state
    span = max(1, ref.text.lines - PARTIAL_LINES + 1)
    start = 1 + (abs(call.i) * 7919) % span
    end = min(ref.text.lines, start + PARTIAL_LINES - 1)
    r = call.client.get(f"/api/notes/{ref.id}/", params={"start_line": start, "end_line": end})
    problem = None
    if call.warmup and r.status_code == 200:
        content = r.json().get("content")
        want = "".join(ref.text.content.splitlines(keepends=True)[start - 1 : end])
        if not isinstance(content, str) or content.rstrip("\n") != want.rstrip("\n"):
            got = content if not isinstance(content, str) else f"{content.count(chr(10))} newlines"
            problem = f"partial read {start}-{end}: content is not those lines ({got!r:.80})"
    return http_outcome(r, 200, problem)


def _search(call: Call, q: str, want: int) -> Outcome:
    ref: NoteRef = call.state
    r = call.client.get(f"/api/notes/{ref.id}/search/", params={"q": q})
    problem = None
    if call.warmup and r.status_code == 200:
        total = r.json().get("total_matches")
        if total != want:
            problem = f"search {q!r}: total_matches={total!r}, expected {want}"
    return http_outcome(r, 200, problem)


def op_search_marker(call: Call) -> Outcome:
    return _search(call, call.state.text.marker, 1)


def op_search_token(call: Call) -> Outcome:
    return _search(call, call.state.text.token, call.state.text.token_lines)


FAIL_BODY_LIMIT = 20 * 1024


def op_replace_fail(call: Call) -> Outcome:
    ref: NoteRef = call.state
    r = call.client.patch(
        f"/api/notes/{ref.id}/str-replace/", json={"old_str": ref.text.token, "new_str": "x"}
    )
    out = http_outcome(r, 400)
    if out.ok and b"multiple_matches" not in r.content:
        out.ok, out.detail = False, r.text[:300]
    if len(r.content) >= FAIL_BODY_LIMIT:
        out.problem = (
            f"failing str-replace body is {len(r.content)} bytes (limit {FAIL_BODY_LIMIT})"
        )
    elif call.warmup and out.ok:
        d = r.json()
        if d.get("error") != "multiple_matches" or d.get("total_matches") != ref.text.token_lines:
            out.problem = (
                f"error={d.get('error')!r} total_matches={d.get('total_matches')!r}, "
                f"expected multiple_matches/{ref.text.token_lines}"
            )
        elif len(d.get("matches", [])) > 20:
            out.problem = f"{len(d['matches'])} matches returned (max 20)"
    return out


# -- successful str-replace, alternating values; each worker owns one marker line

REPLACE_VALUES = ("alpha", "bravo")


@dataclasses.dataclass
class ReplaceState:
    ref: NoteRef
    tag: str
    values: list[int]  # per worker: index into REPLACE_VALUES currently in the note
    used: int = 0  # workers used so far

    def marker(self, worker: int, value: int) -> str:
        return f"rpl-{self.tag}-w{worker}-{REPLACE_VALUES[value]}"

    def line(self, worker: int) -> int:
        text = self.ref.text
        return text.marker_line if worker == 0 else sorted(text.extra)[worker - 1]


def setup_replace(bench: Bench, size: int | None) -> ReplaceState:
    assert size is not None
    workers = max(bench.concurrency)
    tag = uuid.uuid4().hex[:8]
    st = ReplaceState(NoteRef("", make_note(1)), tag, [0] * workers)
    markers = [st.marker(w, 0) for w in range(workers)]
    # Worker 0's marker is the middle marker line itself; the others follow it.
    text = make_note(size, marker=markers[0], extra_markers=markers[1:])
    st.ref = NoteRef(bench.create_note(f"bench replace {size}", text.content), text)
    return st


def op_replace_ok(call: Call) -> Outcome:
    st: ReplaceState = call.state
    w = call.worker
    st.used = max(st.used, w + 1)
    cur = st.values[w]
    new = 1 - cur
    r = call.client.patch(
        f"/api/notes/{st.ref.id}/str-replace/",
        json={"old_str": st.marker(w, cur), "new_str": st.marker(w, new)},
    )
    problem = None
    if r.status_code == 200:
        st.values[w] = new
        if call.warmup and r.json().get("line") != st.line(w):
            problem = f"str-replace reported line {r.json().get('line')!r}, expected {st.line(w)}"
    elif r.status_code == 400 and b"multiple_matches" not in r.content:
        st.values[w] = new  # our marker is not there (e.g. a lost update): resynchronise
    return http_outcome(r, 200, problem)


def after_replace(bench: Bench, st: ReplaceState, concurrency: int) -> list[str]:
    """Every worker's marker must hold the value of its last successful replace."""
    with bench.client() as c:
        r = c.get(f"/api/notes/{st.ref.id}/")
    if r.status_code != 200:
        return [f"verify GET -> HTTP {r.status_code}"]
    content = r.json().get("content", "")
    lost = [
        w
        for w in range(st.used)
        if content.count(st.marker(w, st.values[w])) != 1
        or st.marker(w, 1 - st.values[w]) in content
    ]
    if lost:
        # Resynchronise so the next row starts from the note's real state.
        for w in lost:
            st.values[w] = 1 if st.marker(w, 1) in content else 0
        return [f"note content disagrees with the acknowledged replaces of workers {lost}"]
    return []


# -- list with q over a corpus of small notes


@dataclasses.dataclass
class ListState:
    notes: int
    matching: int


def setup_list(bench: Bench, size: int | None) -> ListState:
    n = bench.list_notes
    matching = 0
    items = []
    for k in range(n):
        hit = k % 5 == 0
        matching += hit
        word = f" {LIST_WORD}" if hit else ""
        body = "".join(
            _line(k * 3 + j, word[1:] + " " if hit and j == 1 else "") + "\n" for j in range(3)
        )
        items.append((f"list note {k}{word}", body))
    bench.create_notes(items)
    return ListState(n, matching)


def op_list_q(call: Call) -> Outcome:
    st: ListState = call.state
    r = call.client.get("/api/notes/", params={"q": LIST_WORD, "limit": 50})
    problem = None
    if call.warmup and r.status_code == 200:
        d = r.json()
        results = d.get("results", d) if isinstance(d, dict) else d
        count = d.get("count") if isinstance(d, dict) else None
        if not isinstance(results, list) or len(results) != min(50, st.matching):
            got = len(results) if isinstance(results, list) else type(results).__name__
            problem = f"list q: {got} results, expected {min(50, st.matching)}"
        elif count is not None and count != st.matching:
            problem = f"list q: count={count}, expected {st.matching}"
    return http_outcome(r, 200, problem)


# -- str-replace on a 1,000,000-character note with version history on (issue 5)

HISTORY_LINES = 16_667  # make_note lines are ~60 characters: ~1,000,000 characters in all


def history_report(bench: Bench, st: ReplaceState) -> dict:
    """Versions after the create and the characters their patches and snapshots store."""
    code = (
        "from django.db.models import Count, Sum; "
        "from django.db.models.functions import Coalesce, Length; "
        "from content.models import ItemVersion as V; "
        f"a = V.objects.filter(item_id='{st.ref.id}', version__gt=1).aggregate("
        "n=Count('id'), p=Coalesce(Sum(Length('content_patch')), 0), "
        "s=Coalesce(Sum(Length('content_snapshot')), 0)); "
        "print(a['n'], a['p'] + a['s'])"
    )
    versions, chars = bench.server.manage("shell", "-c", code).split()[-2:]
    log(f"  history: {versions} versions after the create store {chars} characters")
    return {"history_versions": int(versions), "history_chars": int(chars)}


# -- agent power (issue 10): multi-edit, replace_all, dry run and a pathological no_match

AGENT_LINES = 100_000


@dataclasses.dataclass
class MultiEditState:
    ref: NoteRef
    markers: list[str]  # one per edit; the note holds marker + "-a" or marker + "-b"
    value: str = "a"  # what every marker currently ends with


def setup_multi_edit(edits: int) -> Callable[[Bench, int | None], MultiEditState]:
    def setup(bench: Bench, size: int | None) -> MultiEditState:
        assert size is not None
        tag = uuid.uuid4().hex[:6]
        markers = [f"me{tag}x{k:03d}y" for k in range(edits)]
        text = make_note(
            size, marker=markers[0] + "-a", extra_markers=[m + "-a" for m in markers[1:]]
        )
        return MultiEditState(
            NoteRef(bench.create_note(f"bench multi {edits}", text.content), text), markers
        )

    return setup


def op_multi_edit(call: Call) -> Outcome:
    st: MultiEditState = call.state
    new = "b" if st.value == "a" else "a"
    edits = [{"old_str": f"{m}-{st.value}", "new_str": f"{m}-{new}"} for m in st.markers]
    r = call.client.patch(f"/api/notes/{st.ref.id}/str-replace/", json={"edits": edits})
    problem = None
    if r.status_code == 200:
        st.value = new
        results = r.json().get("edits", [])
        if call.warmup and len(results) != len(st.markers):
            problem = f"multi-edit answered {len(results)} results for {len(st.markers)} edits"
    return http_outcome(r, 200, problem)


SWAPPED_TOKEN = "qzyswapped"  # replaces TOKEN and back; in no generated line


@dataclasses.dataclass
class ReplaceAllState:
    ref: NoteRef
    current: str = TOKEN


def setup_replace_all(bench: Bench, size: int | None) -> ReplaceAllState:
    assert size is not None
    text = make_note(size)
    return ReplaceAllState(
        NoteRef(bench.create_note(f"bench replace_all {size}", text.content), text)
    )


def op_replace_all(call: Call) -> Outcome:
    st: ReplaceAllState = call.state
    new = SWAPPED_TOKEN if st.current == TOKEN else TOKEN
    body = {"old_str": st.current, "new_str": new, "replace_all": True}
    r = call.client.patch(f"/api/notes/{st.ref.id}/str-replace/", json=body)
    problem = None
    if r.status_code == 200:
        st.current = new
        count = r.json().get("replacements")
        if count != st.ref.text.token_lines:
            problem = f"replace_all replaced {count!r}, expected {st.ref.text.token_lines}"
    return http_outcome(r, 200, problem)


def op_dry_run(call: Call) -> Outcome:
    ref: NoteRef = call.state
    body = {"old_str": ref.text.marker, "new_str": "dry-run-value", "dry_run": True}
    r = call.client.patch(f"/api/notes/{ref.id}/str-replace/", json=body)
    problem = None
    if call.warmup and r.status_code == 200:
        d = r.json()
        if d.get("dry_run") is not True or "+" not in d.get("diff", ""):
            problem = f"dry run answered {str(d)[:200]}"
    return http_outcome(r, 200, problem)


PATHOLOGICAL_CHARS = 10_000_000
PATHOLOGICAL_OLD_STR = "a\na\n" * 50


def setup_pathological(bench: Bench, size: int | None) -> NoteRef:
    """A ~10 MB note of lines alternating "a" / "  a": every line of old_str matches half the
    text's lines up to indentation, so the indentation-relative level has the most to rule out."""
    content = ("a\n  a\n" * (PATHOLOGICAL_CHARS // 6))[: PATHOLOGICAL_CHARS - 1]
    return NoteRef(bench.create_note("bench pathological", content), make_note(20))


def op_pathological(call: Call) -> Outcome:
    ref: NoteRef = call.state
    body = {"old_str": PATHOLOGICAL_OLD_STR, "new_str": "b"}
    r = call.client.patch(f"/api/notes/{ref.id}/str-replace/", json=body)
    out = http_outcome(r, 400)
    if out.ok and r.json().get("error") != "no_match":
        out.ok, out.detail = False, r.text[:300]
    return out


# replace_all over 10 000 000 characters (issue 22, SPEC §4.3 Cost): 100 000 "a"s (the default
# TIDDLY_MAX_REPLACEMENTS) swapped with "b" and back, and ten million "a"s, refused up front.
REPLACE_ALL_10M_COUNT = 100_000


def setup_replace_all_10m(bench: Bench, size: int | None) -> ReplaceAllState:
    content = ("a" + "x" * 99) * REPLACE_ALL_10M_COUNT
    return ReplaceAllState(
        NoteRef(bench.create_note("bench replace_all 10m", content), make_note(20)), current="a"
    )


def op_replace_all_10m(call: Call) -> Outcome:
    st: ReplaceAllState = call.state
    new = "b" if st.current == "a" else "a"
    body = {"old_str": st.current, "new_str": new, "replace_all": True}
    r = call.client.patch(f"/api/notes/{st.ref.id}/str-replace/", json=body)
    problem = None
    if r.status_code == 200:
        st.current = new
        if r.json().get("replacements") != REPLACE_ALL_10M_COUNT:
            problem = f"replace_all answered {r.text[:200]}"
    return http_outcome(r, 200, problem)


def setup_replace_all_refused(bench: Bench, size: int | None) -> NoteRef:
    content = "a" * PATHOLOGICAL_CHARS
    return NoteRef(bench.create_note("bench replace_all refused", content), make_note(20))


def op_replace_all_refused(call: Call) -> Outcome:
    ref: NoteRef = call.state
    body = {"old_str": "a", "new_str": "b", "replace_all": True}
    r = call.client.patch(f"/api/notes/{ref.id}/str-replace/", json=body)
    out = http_outcome(r, 400)
    if out.ok and r.json().get("error") != "field_limit_exceeded":
        out.ok, out.detail = False, r.text[:300]
    return out


# -- saved filter list and get_context over a 10 000-item corpus (issue 11)

ORGANISE_ITEMS = 10_000
# Bulk insert (the REST API would take minutes for 10 000 items): notes and bookmarks, each with
# three of 200 tags, and one saved filter "t1 AND t2, OR t3" over both types.
_ORGANISE_SETUP = """
from django.contrib.auth import get_user_model
from content.models import Bookmark, Note, SavedFilter, Tag
from content.services.filters import create_filter
owner = get_user_model().objects.get(username="bench")
tags = Tag.objects.bulk_create([Tag(owner=owner, name=f"t{i}") for i in range(200)])
notes = Note.objects.bulk_create(
    [Note(owner=owner, title=f"org note {i}", content="x" * 200) for i in range(N // 2)])
marks = Bookmark.objects.bulk_create(
    [Bookmark(owner=owner, title=f"org mark {i}", url=f"https://e.com/{i}") for i in range(N // 2)])
for model, items in ((Note, notes), (Bookmark, marks)):
    through, col = model.tags.through, model._meta.model_name + "_id"
    through.objects.bulk_create([through(**{col: it.pk, "tag_id": tags[(i + 67 * k) % 200].pk})
                                 for i, it in enumerate(items) for k in (1, 2, 3)])
f = create_filter(owner=owner, data={"name": "bench", "content_types": ["note", "bookmark"],
    "expression": {"groups": [{"tags": ["t1", "t2"]}, {"tags": ["t3"]}]}})
print(f.pk)
"""


@dataclasses.dataclass
class OrganiseState:
    filter_id: str


_organise_state: OrganiseState | None = None


def setup_organise(bench: Bench, size: int | None) -> OrganiseState:
    global _organise_state
    if _organise_state is None:
        code = _ORGANISE_SETUP.replace("N // 2", str(ORGANISE_ITEMS // 2))
        filter_id = bench.server.manage("shell", "-c", code).split()[-1]
        _organise_state = OrganiseState(filter_id)
    return _organise_state


def op_list_filter(call: Call) -> Outcome:
    st: OrganiseState = call.state
    r = call.client.get("/api/content/", params={"filter_id": st.filter_id, "limit": 50})
    problem = None
    if call.warmup and r.status_code == 200 and not r.json().get("count"):
        problem = "list filter_id: no item matched"
    return http_outcome(r, 200, problem)


SCENARIOS: list[Scenario] = [
    Scenario(
        "list_q",
        op_list_q,
        "GET /api/notes/?q=WORD&limit=50 over the list corpus (1 in 5 notes match)",
        setup=setup_list,
        sized=False,
        group="list",
    ),
    Scenario(
        "list_filter_10k",
        op_list_filter,
        "GET /api/content/?filter_id=F&limit=50 over 10 000 notes+bookmarks (filter: 2 groups)",
        setup=setup_organise,
        sized=False,
        group="organise 10k",
    ),
    Scenario(
        "create",
        op_create,
        "POST /api/notes/ with a note of the given size (a new note each time)",
        setup=setup_create,
        count=lambda size: 200 if size <= 1_000 else 100 if size <= 10_000 else 20,
    ),
    Scenario("get_full", op_get_full, "GET /api/notes/{id}/", setup=setup_read),
    Scenario(
        "get_partial",
        op_get_partial,
        "GET /api/notes/{id}/?start_line=A&end_line=A+49",
        setup=setup_read,
    ),
    Scenario(
        "search_marker",
        op_search_marker,
        "GET /api/notes/{id}/search/?q=<unique marker>",
        setup=setup_read,
    ),
    Scenario(
        "search_token",
        op_search_token,
        "GET /api/notes/{id}/search/?q=<token on every 10th line>",
        setup=setup_read,
    ),
    Scenario(
        "replace_ok",
        op_replace_ok,
        "PATCH str-replace of a unique marker, alternating values (one marker per worker)",
        setup=setup_replace,
        after=after_replace,
    ),
    Scenario(
        "replace_history_1m",
        op_replace_ok,
        "PATCH str-replace on a 1,000,000-char note, history on: 100 edits, history size reported",
        setup=setup_replace,
        after=after_replace,
        report=history_report,
        sizes=(HISTORY_LINES,),
        concurrency=(1,),
        count=lambda size: 100,
        group="history 1M chars",
    ),
    Scenario(
        "replace_fail",
        op_replace_fail,
        "PATCH str-replace of the repeated token -> 400 multiple_matches",
        setup=setup_read,
    ),
    Scenario(
        "multi_edit_10",
        op_multi_edit,
        "PATCH str-replace with edits: 10 markers at once on a 100,000-line note",
        setup=setup_multi_edit(10),
        sizes=(AGENT_LINES,),
        concurrency=(1,),
        count=lambda size: 40,
        group="agent power",
    ),
    Scenario(
        "multi_edit_100",
        op_multi_edit,
        "PATCH str-replace with edits: 100 markers at once on a 100,000-line note",
        setup=setup_multi_edit(100),
        sizes=(AGENT_LINES,),
        concurrency=(1,),
        count=lambda size: 40,
        group="agent power",
    ),
    Scenario(
        "replace_all_10k",
        op_replace_all,
        "PATCH str-replace replace_all of the token on every 10th line (10,000 occurrences)",
        setup=setup_replace_all,
        sizes=(AGENT_LINES,),
        concurrency=(1,),
        count=lambda size: 40,
        group="agent power",
    ),
    Scenario(
        "dry_run_100k",
        op_dry_run,
        "PATCH str-replace dry_run of the unique marker on a 100,000-line note (diff, no write)",
        setup=setup_read,
        sizes=(AGENT_LINES,),
        concurrency=(1,),
        count=lambda size: 40,
        group="agent power",
    ),
    Scenario(
        "pathological_no_match",
        op_pathological,
        'PATCH str-replace of "a\\na\\n"*50 on a 10 MB note of alternating "a"/"  a" lines '
        "-> 400 no_match",
        setup=setup_pathological,
        sized=False,
        concurrency=(1,),
        count=lambda size: 10,
        group="pathological 10 MB",
    ),
    Scenario(
        "replace_all_10m",
        op_replace_all_10m,
        'PATCH str-replace replace_all of "a" <-> "b" on a 10 MB note holding 100,000 of them',
        setup=setup_replace_all_10m,
        sized=False,
        concurrency=(1,),
        count=lambda size: 10,
        group="pathological 10 MB",
    ),
    Scenario(
        "replace_all_refused",
        op_replace_all_refused,
        'PATCH str-replace replace_all of "a" on a note of 10,000,000 "a"s -> 400 '
        "field_limit_exceeded",
        setup=setup_replace_all_refused,
        sized=False,
        concurrency=(1,),
        count=lambda size: 10,
        group="pathological 10 MB",
    ),
]


# MCP rows (bench/mcp_scenarios.py). It gets this module's namespace instead of importing it:
# run.py runs as __main__.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import mcp_scenarios  # noqa: E402

SCENARIOS += mcp_scenarios.scenarios(sys.modules[__name__])


# Runner --------------------------------------------------------------------------------------


class Bench:
    def __init__(self, args: argparse.Namespace, server: Server, token: str):
        self.args = args
        self.server = server
        self.token = token
        self.quick: bool = args.quick
        self.concurrency: list[int] = args.concurrency
        self.list_notes: int = args.list_notes
        self._notes: dict[tuple[int, str], NoteRef] = {}

    def client(self, timeout: float = 300) -> httpx.Client:
        return make_client(self.server.base_url, self.token, timeout=timeout)

    def create_note(self, title: str, content: str) -> str:
        with self.client() as c:
            r = c.post("/api/notes/", json={"title": title, "content": content})
        if r.status_code != 201:
            raise RuntimeError(f"creating note {title!r}: HTTP {r.status_code}: {r.text[:300]}")
        return r.json()["id"]

    def create_notes(self, items: Sequence[tuple[str, str]], workers: int = 2) -> list[str]:
        def work(chunk: Sequence[tuple[str, str]]) -> list[str]:
            ids = []
            with self.client() as c:
                for title, content in chunk:
                    for attempt in range(3):  # retry server errors (e.g. a busy SQLite)
                        r = c.post("/api/notes/", json={"title": title, "content": content})
                        if r.status_code < 500:
                            break
                        time.sleep(0.2 * (attempt + 1))
                    if r.status_code != 201:
                        raise RuntimeError(
                            f"creating {title!r}: HTTP {r.status_code}: {r.text[:300]}"
                        )
                    ids.append(r.json()["id"])
            return ids

        chunks = [items[k::workers] for k in range(workers)]
        with ThreadPoolExecutor(workers) as pool:
            return [i for ids in pool.map(work, chunks) for i in ids]

    def note(self, size: int, kind: str) -> NoteRef:
        key = (size, kind)
        if key not in self._notes:
            text = make_note(size)
            self._notes[key] = NoteRef(self.create_note(f"bench {kind} {size}", text.content), text)
        return self._notes[key]


@contextlib.contextmanager
def http_worker(bench: Bench) -> Iterator[httpx.Client]:
    with bench.client(timeout=bench.args.request_timeout) as c:
        yield c


def run_row(bench: Bench, sc: Scenario, size: int | None, conc: int, state: Any) -> dict:
    n = sc.count(size)
    if bench.quick:
        n = min(n, bench.args.quick_requests)
    n = max(n, conc)
    warmup = 1 if bench.quick else sc.warmup
    row_timeout = bench.args.row_timeout
    counter = itertools.count()
    lock = threading.Lock()
    t0: list[float] = []
    barrier = threading.Barrier(conc, action=lambda: t0.append(time.perf_counter()))
    problems: list[str] = []
    results: list[list[tuple[float, Outcome]]] = [[] for _ in range(conc)]
    ends: list[float] = []
    open_worker = sc.open_worker or http_worker

    def run_op(client: Any, w: int, i: int, is_warmup: bool) -> Outcome:
        try:
            return sc.op(Call(bench, client, w, i, state, is_warmup))
        except Exception as e:  # a failed request is a result, not a crash
            return Outcome(False, 0, 0, None, f"{type(e).__name__}: {e}"[:300])

    def worker(w: int) -> None:
        try:
            _worker(w)
        except BaseException:
            barrier.abort()
            raise

    def _worker(w: int) -> None:
        with open_worker(bench) as client:
            for j in range(warmup if w == 0 else 1):
                out = run_op(client, w, -1 - j, True)
                if out.problem:
                    problems.append(out.problem)
                if not out.ok:
                    problems.append(f"warm-up: HTTP {out.status}: {out.detail}")
            try:
                barrier.wait(timeout=row_timeout)
            except threading.BrokenBarrierError:
                problems.append("warm-up barrier broken")
                return
            deadline = t0[0] + row_timeout
            while True:
                with lock:
                    i = next(counter)
                if i >= n or time.perf_counter() > deadline or STOP.is_set():
                    break
                start = time.perf_counter()
                out = run_op(client, w, i, False)
                results[w].append((time.perf_counter() - start, out))
            ends.append(time.perf_counter())

    pool = ThreadPoolExecutor(conc)
    try:
        for f in [pool.submit(worker, w) for w in range(conc)]:
            f.result()
    except BaseException:
        STOP.set()
        barrier.abort()
        bench.server.stop()  # in-flight requests fail at once instead of running on
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)

    done = [x for r in results for x in r]
    lat = sorted(d for d, _ in done)
    outs = [o for _, o in done]
    ok = sum(o.ok for o in outs)
    wall = (max(ends) - t0[0]) if ends and t0 else 0.0
    statuses: dict[str, int] = {}
    for o in outs:
        statuses[str(o.status)] = statuses.get(str(o.status), 0) + 1
    problems += [o.problem for o in outs if o.problem]
    if sc.after is not None:
        problems += sc.after(bench, state, conc)
    extra = sc.report(bench, state) if sc.report is not None else {}
    errors = [f"HTTP {o.status}: {o.detail}" for o in outs if not o.ok]
    sizes = [o.nbytes for o in outs]

    def ms(v: float | None) -> float | None:
        return None if v is None else round(v * 1000, 2)

    return {
        "scenario": sc.name,
        "lines": size,
        "concurrency": conc,
        "requested": n,
        "n": len(done),
        "ok": ok,
        "non_ok": len(done) - ok,
        "status_counts": statuses,
        "truncated": len(done) < n,
        "wall_s": round(wall, 3),
        "rps": round(len(done) / wall, 2) if wall > 0 else None,
        "mean_ms": ms(statistics.fmean(lat)) if lat else None,
        "p50_ms": ms(percentile(lat, 50)),
        "p95_ms": ms(percentile(lat, 95)),
        "p99_ms": ms(percentile(lat, 99)),
        "max_ms": ms(lat[-1] if lat else None),
        "body_bytes_mean": round(statistics.fmean(sizes)) if sizes else None,
        "body_bytes_max": max(sizes) if sizes else None,
        "problems": _tally(problems),
        "errors": _tally(errors),
        **extra,
    }


def _tally(messages: list[str], limit: int = 10) -> list[str]:
    """Distinct messages in first-seen order, with a count when repeated."""
    counts: dict[str, int] = {}
    for m in messages:
        counts[m] = counts.get(m, 0) + 1
    return [m if k == 1 else f"{m} (x{k})" for m, k in list(counts.items())[:limit]]


# Output --------------------------------------------------------------------------------------


def _git(*args: str) -> str | None:
    try:
        res = subprocess.run(
            ["git", *args], cwd=APP_DIR, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() if res.returncode == 0 else None


def machine_info() -> dict:
    cpu_model = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    mem_kb = _status_kb_file("/proc/meminfo", "MemTotal")
    versions = {}
    for pkg in ("Django", "djangorestframework", "uvicorn", "httpx", "psycopg", "mcp"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[pkg] = importlib.metadata.version(pkg)
    return {
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": cpu_model,
        "mem_total_mb": round(mem_kb / 1024) if mem_kb else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": versions,
    }


def _status_kb_file(path: str, field: str) -> int:
    with contextlib.suppress(OSError):
        for line in Path(path).read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _fmt(v: Any, nd: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def format_table(rows: list[dict], rss: dict) -> str:
    cols = [
        ("scenario", "scenario", "<"), ("lines", "lines", ">"), ("c", "concurrency", ">"),
        ("n", "n", ">"), ("ok", "ok", ">"), ("req/s", "rps", ">"), ("p50 ms", "p50_ms", ">"),
        ("p95 ms", "p95_ms", ">"), ("p99 ms", "p99_ms", ">"), ("body B", "body_bytes_max", ">"),
        ("peak RSS MB", "peak_rss_mb", ">"),
    ]  # fmt: skip
    cells = [[h for h, _, _ in cols]]
    for r in rows:
        cells.append([_fmt(r.get(k)) for _, k, _ in cols])
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = []
    for j, c in enumerate(cells):
        lines.append(
            "  ".join(
                f"{v:{a}{w}}" for v, w, (_, _, a) in zip(c, widths, cols, strict=True)
            ).rstrip()
        )
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(
        "server peak RSS (VmHWM) per group" + ("" if rss["reset"] else " (cumulative)") + ":"
    )
    for g, v in rss["groups"].items():
        lines.append(
            f"  {g:<14} {v:>8.1f} MB   (cumulative VmHWM after it: {rss['after'][g]:.1f} MB)"
        )
    lines.append(f"  {'overall':<14} {rss['overall_peak_mb']:>8.1f} MB")
    flagged = [r for r in rows if r["problems"] or r["errors"]]
    if flagged:
        lines.append("")
        lines.append("problems / unexpected responses:")
        for r in flagged:
            for p in r["problems"] + r["errors"]:
                lines.append(f"  {r['scenario']} lines={r['lines']} c={r['concurrency']}: {p}")
    return "\n".join(lines)


# Main ----------------------------------------------------------------------------------------


def _int_list(s: str) -> list[int]:
    return [int(x.replace("_", "")) for x in s.split(",") if x.strip()]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL"),
        help="postgres://... server to create a fresh 'tiddly_bench' database on "
        "(dropped first); default: a fresh temporary SQLite file",
    )
    p.add_argument(
        "--db-name",
        default=BENCH_DB_NAME,
        help=f"PostgreSQL database to (re)create and use (default {BENCH_DB_NAME}); pick another "
        "to run beside someone else's benchmark",
    )
    p.add_argument("--sizes", type=_int_list, default=[100, 10_000, 100_000])
    p.add_argument("--concurrency", type=_int_list, default=[1, 8])
    p.add_argument("--quick", action="store_true", help="smoke run: a few requests per row")
    p.add_argument("--quick-requests", type=int, default=5)
    p.add_argument(
        "--only",
        type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
        help="comma-separated scenario names (see --list)",
    )
    p.add_argument("--list", action="store_true", help="list scenarios and exit")
    p.add_argument(
        "--list-notes",
        type=int,
        default=None,
        help="notes in the list_q corpus (default 1000, 200 with --quick)",
    )
    p.add_argument("--out", type=Path, help="JSON output (default bench/results/<db>-<date>.json)")
    p.add_argument(
        "--row-timeout",
        type=float,
        default=120,
        help="seconds after which a row stops issuing requests",
    )
    p.add_argument("--request-timeout", type=float, default=120)
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 if any row had unexpected responses, problems or was cut short",
    )
    p.add_argument(
        "--app-dir",
        type=Path,
        default=ROOT,
        help="checkout to benchmark (manage.py, tiddly.asgi); default: this repo",
    )
    p.add_argument("--keep-tmp", action="store_true", help="keep the temp dir (db, server log)")
    p.add_argument(
        "--port", type=int, default=0, help="port for the server (default: any free port)"
    )
    p.add_argument("--self-test", action="store_true", help="check note generation and exit")
    args = p.parse_args(argv)
    if args.list_notes is None:
        args.list_notes = 200 if args.quick else 1000
    known = {s.name for s in SCENARIOS}
    if args.only and (unknown := set(args.only) - known):
        p.error(f"unknown scenario(s) {sorted(unknown)}; known: {', '.join(sorted(known))}")
    if not args.concurrency or min(args.concurrency) < 1 or max(args.concurrency) > 64:
        p.error("--concurrency values must be in 1..64")
    if not args.sizes or min(args.sizes) < 20:
        p.error("--sizes values must be >= 20")
    return args


def self_test() -> None:
    for lines in (20, 100, 101, 10_000, 100_000):
        t = make_note(lines, extra_markers=[f"rpl-x-w{w}-alpha" for w in range(1, 8)])
        rows = t.content.split("\n")
        assert rows[-1] == "", lines
        assert len(rows) - 1 == lines, lines
        assert all(len(r) == LINE_CHARS for r in rows[:-1]), lines
        assert len(t.content) == 60 * lines
        assert t.content.count(t.marker) == 1, lines
        assert t.marker in rows[t.marker_line - 1]
        assert abs(t.marker_line - (lines / 2 + 1)) <= 1.5
        assert t.content.count(TOKEN) == t.token_lines == lines // 10, lines
        assert all(TOKEN in rows[i - 1] for i in range(10, lines + 1, 10))
        for ln, m in t.extra.items():
            assert t.content.count(m) == 1, m
            assert m in rows[ln - 1], m
            assert ln % 10, ln
        assert len(set(rows[:-1])) == lines  # every line is different
        assert LIST_WORD not in t.content
    for vals in ([1.0], [1.0, 2.0], [3.0, 1.0, 2.0, 10.0], [float(i) for i in range(1, 1001)]):
        s = sorted(vals)
        if len(s) > 1:
            q = statistics.quantiles(s, n=100, method="inclusive")
            for p in (50, 95, 99):
                assert math.isclose(percentile(s, p), q[p - 1]), (vals, p)
    assert percentile([], 50) is None
    assert percentile([5.0], 99) == 5.0
    assert percentile([float(i) for i in range(1, 101)], 50) == 50.5
    print("self-test ok")


def main(argv: Sequence[str] | None = None) -> int:
    global APP_DIR
    args = parse_args(argv)
    APP_DIR = args.app_dir.resolve()
    if args.self_test:
        self_test()
        return 0
    scenarios = [s for s in SCENARIOS if not args.only or s.name in args.only]
    if args.list:
        for s in SCENARIOS:
            print(f"{s.name:<16} {s.description}")
        return 0

    # SIGTERM -> SystemExit, so the finally blocks below stop the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
    STOP.clear()
    workdir = Path(tempfile.mkdtemp(prefix="tiddly-bench-"))
    server: Server | None = None
    started = dt.datetime.now(dt.UTC)
    try:
        if not args.db_name.isidentifier():
            raise SystemExit(f"--db-name must be a plain identifier, not {args.db_name!r}")
        db_url, vendor, db_version = prepare_database(args.database_url, workdir, args.db_name)
        env = dict(os.environ)
        env.update(
            DATABASE_URL=db_url,
            DJANGO_DEBUG="0",
            DJANGO_SECRET_KEY="bench-" + uuid.uuid4().hex,
            TIDDLY_THROTTLE_ENABLED="0",
            DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
            PYTHONUNBUFFERED="1",
        )
        server = Server(env, workdir, args.port or free_port(), APP_DIR)
        atexit.register(server.stop)
        log(f"database: {vendor} {redact(db_url)}")
        server.manage("migrate", "--noinput")
        out = server.manage("create_token", "bench", "--name", "bench", "--create-user").strip()
        token = next((w for w in out.split() if w.startswith("tdly_")), out.splitlines()[-1])
        server.start()
        server.wait_ready(token)
        log(f"server pid {server.proc.pid} on {server.base_url}")
        bench = Bench(args, server, token)

        groups: dict[str, list[tuple[Scenario, int | None]]] = {}
        for sc in scenarios:
            for group, size in sc.plan(args.sizes):
                groups.setdefault(group, []).append((sc, size))

        rows: list[dict] = []
        rss_reset = True
        group_peak: dict[str, float] = {}
        after_group: dict[str, float] = {}
        overall = 0.0
        cumulative = 0.0
        for group, items in groups.items():
            peak = 0.0
            for sc, size in items:
                state = sc.setup(bench, size)
                for conc in sc.concurrency or args.concurrency:
                    if not server.alive():
                        raise RuntimeError(f"server died:\n{server.log_tail()}")
                    before = server.hwm_kb() / 1024  # covers the setup since the last reset
                    peak, overall = max(peak, before), max(overall, before)
                    cumulative = max(cumulative, before)
                    rss_reset = server.reset_hwm() and rss_reset
                    log(f"{sc.name} lines={size} c={conc} ...")
                    row = run_row(bench, sc, size, conc, state)
                    row["group"] = group
                    row["peak_rss_mb"] = round(server.hwm_kb() / 1024, 1)
                    row["rss_after_mb"] = round(server.rss_kb() / 1024, 1)
                    peak = max(peak, row["peak_rss_mb"])
                    overall = max(overall, peak)
                    cumulative = max(cumulative, peak)
                    rows.append(row)
                    log(
                        f"  n={row['n']} ok={row['ok']} {_fmt(row['rps'])} req/s "
                        f"p50={_fmt(row['p50_ms'])} p99={_fmt(row['p99_ms'])} ms "
                        f"rss={row['peak_rss_mb']} MB" + (" PROBLEMS" if row["problems"] else "")
                    )
            group_peak[group] = round(peak, 1)
            after_group[group] = round(cumulative, 1)

        journal_mode = sqlite_journal_mode(db_url) if vendor == "sqlite" else None
        rss = {
            "reset": rss_reset,
            "groups": group_peak,
            "after": after_group,
            "overall_peak_mb": round(overall, 1),
            "note": "per-row/per-group peaks: VmHWM reset via /proc/PID/clear_refs before each row"
            if rss_reset
            else "VmHWM could not be reset: values are cumulative",
        }
        result = {
            "meta": {
                "started_at": started.isoformat(timespec="seconds"),
                "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "db": {
                    "vendor": vendor,
                    "url": redact(db_url),
                    "server_version": db_version,
                    "sqlite_journal_mode": journal_mode,
                },
                "git": {
                    "commit": _git("rev-parse", "HEAD"),
                    "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
                },
                "machine": machine_info(),
                "server": {"cmd": " ".join(server.cmd[1:]), "pid": server.proc.pid},
                "options": {
                    "sizes": args.sizes,
                    "concurrency": args.concurrency,
                    "quick": args.quick,
                    "only": args.only,
                    "list_notes": args.list_notes,
                    "app_dir": str(APP_DIR),
                    "row_timeout_s": args.row_timeout,
                    "line_chars": LINE_CHARS + 1,
                },
            },
            "rss": rss,
            "rows": rows,
        }
        out_path = args.out or ROOT / "bench" / "results" / (
            f"{vendor}-{started:%Y%m%d-%H%M%S}{'-quick' if args.quick else ''}.json"
        )
        out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_path.with_suffix(out_path.suffix + ".tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n")
        tmp.replace(out_path)
        print(format_table(rows, rss))
        print(mcp_scenarios.ratio_table(rows))
        db_line = f"{vendor} {db_version or ''}".strip()
        if journal_mode:
            db_line += f" (journal_mode={journal_mode})"
        print(f"\ndatabase: {db_line}; git {result['meta']['git']['commit'] or '-'}")
        print(f"\nJSON: {out_path}")
        bad = any(r["non_ok"] or r["truncated"] or r["problems"] for r in rows)
        return 1 if args.strict and bad else 0
    finally:
        if server is not None:
            server.stop()
        if args.keep_tmp:
            log(f"kept {workdir}")
        else:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted; server stopped")
        sys.exit(130)
