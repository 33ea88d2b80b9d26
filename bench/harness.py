"""The benchmark's machinery: the server under test, the database, the row registry and the
timing loop. Row modules (bench/rows_*.py) describe requests; bench/run.py is the command line.

Adding a row: in a row module (a new ``bench/rows_<area>.py`` or an existing one) write an ``op``
(one request, returns an ``Outcome``), optionally a ``setup`` (state shared by all rows of that
scenario and size), an ``after`` check and a ``report``, and pass a ``Scenario`` to ``register``.
A new module goes into ``ROW_MODULES`` in bench/run.py (its place there orders the groups: the
list corpus runs before any large note exists). Scenarios that need another client (e.g. an MCP
session) pass ``open_worker``: a context manager factory yielding the per-worker client given to
``op``. A module may also ``register_summary`` a function printing extra lines after the table,
and ``register_env`` a function of the selected scenarios returning environment variables for the
server under test (e.g. an outbound allow-list for a local page server the rows start); values
that several modules give for one variable are joined with commas.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import math
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from notetext import NoteRef, make_note

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
BENCH_DB_NAME = "tiddly_bench"
STOP = threading.Event()  # set on Ctrl-C / SIGTERM: workers stop issuing requests
JSON_HEADERS = {"Content-Type": "application/json"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


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


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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

    def manage(self, *args: str, timeout: float = 300, nice: int = 0) -> str:
        """``manage.py *args`` beside the server (``nice``: run at that lower priority, for fills
        that are not the measurement)."""
        res = subprocess.run(
            [*(["nice", "-n", str(nice)] if nice else []), sys.executable, "manage.py", *args],
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

    def web_hwm_kb(self) -> int:
        """Peak RSS (VmHWM) of the web process alone, without its worker child and others."""
        return _status_kb(self.proc.pid, "VmHWM") if self.proc is not None and self.alive() else 0

    def cpu_s(self) -> tuple[float, float]:
        """CPU seconds used so far by the web process and by its living children together (a
        child that exited takes its seconds with it)."""
        pids = self.pids()
        if not pids:
            return 0.0, 0.0
        return _cpu_s(pids[0]), sum(_cpu_s(p) for p in pids[1:])

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


def bench_env(db_url: str) -> dict[str, str]:
    """The environment a benchmarked server runs with: production settings on ``db_url``."""
    env = dict(os.environ)
    env.update(
        DATABASE_URL=db_url,
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY="bench-" + uuid.uuid4().hex,
        TIDDLY_THROTTLE_ENABLED="0",
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        PYTHONUNBUFFERED="1",
    )
    return env


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


# Registry ------------------------------------------------------------------------------------

SCENARIOS: list[Scenario] = []  # in registration order: groups run in order of first appearance
SUMMARIES: list[Callable[[list[dict]], str]] = []  # extra text printed after the table
ENV_HOOKS: list[Callable[[Sequence[Scenario]], dict[str, str]]] = []  # server environment


def register(*scenarios: Scenario) -> None:
    """Add rows to the benchmark (names are unique: ``--only`` selects by name)."""
    known = {s.name for s in SCENARIOS}
    for sc in scenarios:
        if sc.name in known:
            raise ValueError(f"benchmark row {sc.name!r} registered twice")
        known.add(sc.name)
        SCENARIOS.append(sc)


def register_summary(fn: Callable[[list[dict]], str]) -> None:
    """Add a function of all rows' results whose text is printed after the table."""
    SUMMARIES.append(fn)


def register_env(fn: Callable[[Sequence[Scenario]], dict[str, str]]) -> None:
    """Add a function of the selected scenarios returning environment variables for the server
    (called once, before it starts; return {} when none of your rows is selected)."""
    ENV_HOOKS.append(fn)


def server_env(scenarios: Sequence[Scenario]) -> dict[str, str]:
    """What the ``register_env`` hooks ask for, a variable given twice joined with commas."""
    env: dict[str, str] = {}
    for hook in ENV_HOOKS:
        for key, value in hook(scenarios).items():
            env[key] = f"{env[key]},{value}" if env.get(key) else value
    return env


# Runner --------------------------------------------------------------------------------------


_QUEUE_COUNT = (
    "from django_tasks_db.models import DBTaskResult as T;"
    "print(T.objects.ready().count() + T.objects.filter(status='RUNNING').count())"
)


def wait_for_tasks(bench: Bench, timeout: float = 300) -> list[str]:
    """Wait until the server's task queue holds nothing due or running (the background work an
    earlier row or setup left: page captures, search indexing, deliveries), so each row measures
    its own requests on an idle server; a retry scheduled for later does not count. Returns
    problems. A checkout without a task queue (``--app-dir`` of an older one) has none to wait
    for."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            out = bench.server.manage("shell", "-c", _QUEUE_COUNT)
            left = int(out.strip().splitlines()[-1])
        except (RuntimeError, ValueError, IndexError):
            return []
        if not left:
            return []
        if time.monotonic() > deadline:
            return [f"task queue still held {left} task(s) after {timeout:.0f} s"]
        time.sleep(1)


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

    def wait_for_index(self, timeout: float = 300) -> float:
        """Wait until the meaning index has caught up (``/api/search/status/`` pending 0), so a
        row is not timed while the server's embedded worker indexes what its setup wrote.
        Returns the seconds waited."""
        start = time.monotonic()
        with self.client() as c:
            while time.monotonic() - start < timeout:
                r = c.get("/api/search/status/")
                if r.status_code != 200 or r.json().get("pending") == 0:
                    break
                time.sleep(0.2)
        return time.monotonic() - start

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
