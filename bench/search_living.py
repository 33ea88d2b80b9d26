"""A living library (SPEC §16, round 4): searches between writes, filters, many owners.

In-process on a fresh database (a temporary SQLite file, or ``--database-url``), with the real
configured provider. ``--scale S`` divides the corpus and the index's thresholds (exact limit,
candidates) by S, so a small run exercises the same regimes as SPEC's size (S=1):

- agent loop: ``--loops`` x (edit a short note through the item service, index what is marked as
  the worker would, one hybrid search): search p50/p95, index builds during the loop, and the
  time from the edit until semantic search ranks the edited note in its top 10;
- ``type=prompt&mode=semantic``: top 10 against an exact scan of the 50 prompts' stored vectors;
- recall: 40 notes queried by their title and opening, in semantic's/hybrid's top 10;
- 20 owners x 25 000/S chunks, searched round-robin: p50 and RSS above idle.

Runs on the code before round 4 too (it only uses ``ranking.search`` and the services), for a
side-by-side. ``python bench/search_living.py --scale 16``
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# ``--app-dir DIR``: the code measured (another worktree, for a side-by-side on one corpus).
APP = Path(sys.argv[sys.argv.index("--app-dir") + 1]) if "--app-dir" in sys.argv else ROOT
sys.path.insert(0, str(APP))
sys.path.insert(1, str(ROOT / "bench"))

from search_meaning import WORDS  # noqa: E402


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def scale_thresholds(scale: int) -> None:
    """The index's limits divided by ``scale`` (new code: content.search.vectors; old: semantic)."""
    from content.search import semantic

    try:
        from content.search import vectors as module
    except ImportError:
        module = semantic  # type: ignore[assignment]  # before round 4
    module.EXACT_ROWS //= scale
    module.RERANK //= scale
    if hasattr(module, "RESCORE"):
        module.RESCORE = max(module.RESCORE // scale, 16)
    if hasattr(module, "DELTA_ROWS"):
        module.DELTA_ROWS //= scale


def count_builds() -> list[int]:
    from content.search import semantic

    builds = [0]
    original = semantic._build

    def counted(*a: Any, **k: Any) -> Any:
        builds[0] += 1
        return original(*a, **k)

    semantic._build = counted  # type: ignore[assignment]
    return builds


# --- the corpus -----------------------------------------------------------------------------------
#
# A fair corpus: real notes are told apart by their words. The earlier one drew every note's
# every word from one 50-word list, so all notes had nearly the same vector and even an exact scan
# could not tell a note from its 9 999 siblings by its title and opening (33/40 at 1/32 scale).
# Here each note (and each ~30-line section of a long note) has its own topic: 12 words drawn from
# ~7 000 words of the local model's vocabulary, and half of its words are common filler ("that",
# "with", "this", …) as in prose.


def vocabulary() -> tuple[list[str], list[str]]:
    """(filler, topic words): whole lowercase words of wordllama's tokenizer, most frequent
    first (the first 300 are filler); the 50 bench words when wordllama is not installed."""
    import json
    import re

    try:
        import wordllama
    except ImportError:
        return WORDS[:10], WORDS[10:]
    path = Path(wordllama.__file__).parent / "tokenizers" / "l2_supercat_tokenizer_config.json"
    vocab = json.loads(path.read_text())["model"]["vocab"]
    words = [t[1:] for t in vocab if t.startswith("\u2581") and re.fullmatch(r"[a-z]{4,12}", t[1:])]
    return words[:300], words[300:]


class Corpus:
    def __init__(self, seed: int) -> None:
        import numpy as np

        self.filler, self.topics = vocabulary()
        self.np = np.random.default_rng(seed)
        self.rng = random.Random(seed)

    def topic(self) -> list[str]:
        return self.rng.sample(self.topics, 12)

    def text(self, chars: int, topic: list[str] | None = None, section: int = 0) -> str:
        """About ``chars`` characters of lines of at most 59 characters, half topic words and half
        filler; with ``section`` lines, a new topic every ``section`` lines (a long note)."""
        out: list[str] = []
        n = 0
        while n < chars:
            if topic is None or (section and len(out) % section == 0):
                topic = self.topic()
            lines = section or max(chars // 50, 1)
            picks = self.np.random((lines, 9)) < 0.5
            own = self.np.integers(0, len(topic), (lines, 9))
            common = self.np.integers(0, len(self.filler), (lines, 9))
            for r in range(lines):
                line = " ".join(
                    topic[own[r, c]] if picks[r, c] else self.filler[common[r, c]] for c in range(9)
                )[:59]
                out.append(line)
                n += len(line) + 1
                if n >= chars:
                    break
            if self.np.random() < 0.3:
                out.append("")
        return "\n".join(out)

    def note(self, owner: Any, i: int, chars: int, prefix: str = "Note") -> Any:
        from content.models import Note

        topic = self.topic()
        return Note(
            owner=owner,
            title=f"{prefix} {i}: {topic[0]} {topic[1]} {topic[2]}",
            content=self.text(chars, topic),
        )


def make_owner(name: str, notes: int, corpus: Corpus, chars: tuple[int, int]) -> Any:
    from django.contrib.auth import get_user_model

    from content.models import Note

    user = get_user_model().objects.create_user(name, password="x")
    for s in range(0, notes, 1000):
        Note.objects.bulk_create(
            [
                corpus.note(user, i, corpus.rng.randint(*chars))
                for i in range(s, min(s + 1000, notes))
            ]
        )
    return user


def clone_owner(source: Any, name: str, chunks: int, offset: int) -> None:
    """An owner holding copies of ``source``'s short notes (from the ``offset``-th on, round the
    corpus) and of their stored chunks, until it has ``chunks`` chunks: the many-owners row
    measures memory and search time, which copies measure as well as new text, and 20 x 25 000
    chunks embedded afresh would take the shared machine an hour."""
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.db.models import Count

    from content.models import Note
    from content.models.search import SearchChunk

    notes = list(Note.objects.filter(owner=source, title__startswith="Note ").order_by("pk"))
    notes = notes[offset % len(notes) :] + notes[: offset % len(notes)]
    counts = dict(
        SearchChunk.objects.filter(owner=source, item_type="note")
        .values("item_id")
        .annotate(n=Count("id"))
        .values_list("item_id", "n")
    )
    picked, total = [], 0
    for note in notes:
        if total >= chunks:
            break
        picked.append(note)
        total += counts.get(note.pk, 0)
    with transaction.atomic():
        owner = get_user_model().objects.create_user(name, password="x")
        copies = {
            n.pk: Note(owner=owner, title=n.title, content=n.content, description=n.description)
            for n in picked
        }
        Note.objects.bulk_create(list(copies.values()), batch_size=1000)
        fields = [
            f.name for f in SearchChunk._meta.concrete_fields if f.name not in ("id", "owner")
        ]
        rows = SearchChunk.objects.filter(owner=source, item_type="note", item_id__in=list(copies))
        batch = []
        for chunk in rows.iterator(chunk_size=5000):
            values = {f: getattr(chunk, f) for f in fields}
            values["item_id"] = copies[chunk.item_id].pk
            batch.append(SearchChunk(owner=owner, **values))
            if len(batch) == 5000:
                SearchChunk.objects.bulk_create(batch)
                batch = []
        SearchChunk.objects.bulk_create(batch)


def setup_db(url: str | None, name: str, *, reuse: bool) -> None:
    """Database ``name`` on the PostgreSQL server of ``url`` (or a SQLite file of that name in the
    temporary folder): dropped and made afresh unless ``reuse``."""
    if url:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            there = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
            if there and not reuse:
                conn.execute(f'DROP DATABASE "{name}"')
            if not (there and reuse):
                conn.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = f"{url.rsplit('/', 1)[0]}/{name}"
    else:
        path = Path(tempfile.gettempdir()) / f"{name}.sqlite3"
        if not reuse:
            path.unlink(missing_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tiddly.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


BIG_LINES = 100_000
SECTION = 30  # lines of one topic in a long note
PROMPT_TOPICS = ["cluster upgrade", "sourdough bread", "tax receipts", "guitar chords", "backups"]


def build(args: argparse.Namespace) -> None:
    """§16's corpus for the owner ``bench`` (``--scale`` divides it): 10 000 notes of 1-2 KB,
    100 notes of 100 000 lines, 50 prompts; then ``--owners`` owners of 25 000 chunks (copies of
    its short notes and their vectors: ``clone_owner``). Each part is made only when missing and indexed at once, so a build that was
    stopped goes on where it stopped with ``--reuse``."""
    from django.contrib.auth import get_user_model

    from content.history import Actor
    from content.models import Note
    from content.search import indexing, marks
    from content.services import create_item
    from prompts.models import Prompt

    users = get_user_model().objects
    corpus = Corpus(11)
    started = time.perf_counter()

    def index(what: str) -> None:
        t = time.perf_counter()
        report = indexing.index_pending()
        print(
            f"  {what}: indexed {report.items} items, {report.chunks} chunks in "
            f"{time.perf_counter() - t:.0f}s (build {time.perf_counter() - started:.0f}s)",
            flush=True,
        )

    index("left from an earlier build")
    user = users.filter(username="bench").first()
    if user is None:
        user = make_owner("bench", 10_000 // args.scale, corpus, (1000, 2000))
        indexing.mark_all(owner_id=user.pk)
        index(f"{10_000 // args.scale} short notes")
    big = max(1, 100 // args.scale)
    have = Note.objects.filter(owner=user, title__startswith="Log ").count()
    for i in range(have, big):
        corpus.rng.seed(1000 + i)  # the same note whatever build made the ones before
        note = Note.objects.create(
            owner=user,
            title=f"Log {i}: {' '.join(corpus.topic()[:3])}",
            content=corpus.text(BIG_LINES * 60, section=SECTION),
        )
        marks.mark_dirty(owner_id=user.pk, item_type="note", item_ids=[note.pk])
        if i % 10 == 9 or i == big - 1:
            index(f"long notes up to {i + 1}")
    if not Prompt.objects.filter(owner=user).exists():
        actor = Actor(source="bench")
        for i in range(50):
            create_item(
                owner=user,
                model=Prompt,
                data={
                    "name": f"prompt-{i}",
                    "title": f"{PROMPT_TOPICS[i % 5]} helper {i}",
                    "content": f"Write about {PROMPT_TOPICS[(i * 3) % 5]} and "
                    f"{' '.join(corpus.topic()[:4])} ({i}).",
                },
                actor=actor,
            )
        index("50 prompts")
    for n in range(args.owners):
        if not users.filter(username=f"o{n}").exists():
            clone_owner(user, f"o{n}", 25_000 // args.scale, offset=n * 500)
            print(f"  owner o{n} (a copy): build {time.perf_counter() - started:.0f}s", flush=True)
    from content.services.retention import refresh_statistics

    refresh_statistics()


def exact_scan(owner_id: Any, types: list[str]) -> tuple[Any, list[tuple[str, Any]]]:
    """Every stored int8 vector of the owner's ``types`` as one float32 matrix (scaled: a row
    times a query is its cosine) and each row's item: the exact reference."""
    import numpy as np

    from content.models.search import SearchChunk

    rows = SearchChunk.objects.filter(owner_id=owner_id, item_type__in=types).values_list(
        "item_type", "item_id", "vector", "scale"
    )
    keys: list[tuple[str, Any]] = []
    blob = bytearray()
    scales = []
    for item_type, item_id, vector, scale in rows.iterator(chunk_size=20_000):
        keys.append((item_type, str(item_id)))
        blob += vector
        scales.append(scale)
    matrix = np.frombuffer(bytes(blob), np.int8).reshape(len(keys), -1).astype(np.float32)
    matrix *= np.array(scales, np.float32)[:, None]
    return matrix, keys


def exact_top(
    matrix: Any, keys: list[tuple[str, Any]], query: Any, n: int = 10, floor: float = -1.0
) -> list[str]:
    """The ids of the best ``n`` items by their best chunk (at least ``floor``), exactly."""
    scores = matrix @ query
    best: dict[str, float] = {}
    for i in scores.argsort()[::-1]:
        if scores[i] < floor:
            break
        key = str(keys[i][1])
        if key not in best:
            best[key] = float(scores[i])
            if len(best) == n:
                break
    return list(best)


def recall_notes(user: Any, count: int = 40, spare: int = 200) -> list[Any]:
    """``count`` short notes spread over the corpus, none of the newest ``spare`` (the agent
    loop edits those)."""
    from content.models import Note

    ids = list(
        Note.objects.filter(owner=user, title__startswith="Note ")
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    ids = ids[: max(len(ids) - spare, count)]
    return list(
        Note.objects.filter(pk__in=ids[:: max(1, len(ids) // count)][:count]).order_by("pk")
    )


def measure_prompts(user: Any) -> None:
    from content.queries import lists
    from content.search import ranking
    from content.search.embeddings import provider

    matrix, keys = exact_scan(user.pk, ["prompt"])
    same = 0
    queries = ["cluster upgrade helper", "bread baking", "receipts for taxes", "guitar", "backup"]
    for q in queries:
        exact = exact_top(matrix, keys, provider().embed([q])[0])
        p = lists.ListParams(q=q, limit=10)
        found = [
            r["id"]
            for r in ranking.search(user, ["prompt"], p, mode="semantic", min_score=-1.0)["results"]
        ]
        same += found == exact
    print(f"type=prompt&mode=semantic: {same}/{len(queries)} queries equal the exact top 10")


def measure_recall(user: Any, notes: list[Any]) -> None:
    """Each note queried by its title and opening: its rank in an exact scan of every chunk,
    and whether semantic's and hybrid's top 10 hold it."""
    from content.queries import lists
    from content.search import ranking
    from content.search.embeddings import provider

    t = time.perf_counter()
    matrix, keys = exact_scan(user.pk, ["note"])
    print(f"  (exact reference: {len(keys)} chunks read in {time.perf_counter() - t:.0f}s)")
    hits = {"exact": 0, "semantic": 0, "hybrid": 0}
    times: dict[str, list[float]] = {"semantic": [], "hybrid": []}
    lost, kept, wanted = [], 0, 0
    floor = ranking.relevance_floor(provider().model)
    queries = [f"{note.title} {note.content[:200]}"[:500] for note in notes]
    # Every exact reference first: its scans of 500 MB would leave each timed search a cold cache.
    exacts = [exact_top(matrix, keys, provider().embed([q])[0], floor=floor) for q in queries]
    del matrix
    for note, q, exact in zip(notes, queries, exacts, strict=True):
        wanted += len(exact)
        hits["exact"] += str(note.pk) in exact
        for mode in ("semantic", "hybrid"):
            t = time.perf_counter()
            p = lists.ListParams(q=q, limit=10)
            found = ranking.search(user, ["note"], p, mode=mode)
            times[mode].append(time.perf_counter() - t)
            ids = [r["id"] for r in found["results"]]
            hits[mode] += str(note.pk) in ids
            if mode == "semantic":
                kept += len(set(ids) & set(exact))
                if str(note.pk) in exact and str(note.pk) not in ids:
                    lost.append(note.title)
    n = len(notes)
    print(
        f"recall, title+opening in top 10 of {n}: exact scan {hits['exact']}/{n}, semantic "
        f"{hits['semantic']}/{n} (p50 {pct(times['semantic'], 0.5):.0f} ms), hybrid "
        f"{hits['hybrid']}/{n} (p50 {pct(times['hybrid'], 0.5):.0f} ms); lost by the "
        f"approximate step: {len(lost)}; semantic's top 10s hold {kept}/{wanted} of the exact "
        f"top 10s (above the floor)"
    )


def measure_agent_loop_inprocess(user: Any, loops: int, corpus: Corpus) -> None:
    from content.history import Actor
    from content.models import Note
    from content.queries import lists
    from content.queries.items import ItemRef
    from content.search import indexing, ranking
    from content.services import update_item

    builds = count_builds()
    short = list(Note.objects.filter(owner=user, title__startswith="Note ").order_by("-pk")[:loops])
    search_times: list[float] = []
    found_after: list[float] = []
    actor = Actor(source="bench")
    for note in short:
        topic = corpus.topic()
        content = corpus.text(corpus.rng.randint(1000, 2000), topic)
        edited = time.perf_counter()
        update_item(
            owner=user, ref=ItemRef(Note, pk=note.pk), data={"content": content}, actor=actor
        )
        indexing.index_pending(owner_id=user.pk)  # what the task worker does next
        t = time.perf_counter()
        q = " ".join(topic[3:6])
        ranking.search(user, ["note", "prompt"], lists.ListParams(q=q, limit=20), mode="hybrid")
        search_times.append(time.perf_counter() - t)
        p = lists.ListParams(q=content[:200], limit=10)
        ids = [r["id"] for r in ranking.search(user, ["note"], p, mode="semantic")["results"]]
        found_after.append(time.perf_counter() - edited if str(note.pk) in ids else float("inf"))
    found = [f for f in found_after if f != float("inf")]
    print(
        f"agent loop in-process x{len(short)}: hybrid p50 {pct(search_times, 0.5):.0f} ms, p95 "
        f"{pct(search_times, 0.95):.0f} ms; index builds {builds[0]}; edit found by semantic "
        f"{len(found)}/{len(short)}, p50 {pct(found or [0], 0.5):.0f} ms after the edit "
        f"(incl. indexing)"
    )


def issue_token(username: str) -> str:
    from django.contrib.auth import get_user_model

    from tiddly.models import ApiToken
    from tiddly.scopes import ALL_SCOPES, scope_string

    user = get_user_model().objects.get(username=username)
    return ApiToken.issue(owner=user, name="bench-living", scopes=scope_string(ALL_SCOPES))[1]


def server_for(workers: int, port: int) -> Any:
    from django.conf import settings
    from harness import Server, bench_env

    db = settings.DATABASES["default"]
    url = (
        f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
        if db["ENGINE"].endswith("postgresql")
        else f"sqlite:///{db['NAME']}"
    )
    server = Server(bench_env(url), Path(tempfile.mkdtemp()), port, app_dir=APP)
    server.cmd[server.cmd.index("--workers") + 1] = str(workers)
    return server


def measure_agent_loop_http(user: Any, loops: int, corpus: Corpus, workers: int, port: int) -> None:
    """200 x (edit a short note over MCP, then one hybrid search over REST), the web process as
    ``make run`` starts it with ``workers`` workers: search p50/p95, and the time from the
    edit's answer until a semantic search (polled every 0.1 s) ranks the note in its top 10."""
    import httpx
    from harness import make_client
    from rows_mcp import McpWorker

    from content.models import Note

    token = issue_token(user.username)
    short = list(Note.objects.filter(owner=user, title__startswith="Note ").order_by("-pk")[:loops])
    others = [n.title.split(": ", 1)[1] for n in recall_notes(user, spare=loops)]
    server = server_for(workers, port)
    server.start()
    try:
        server.wait_ready(token, timeout=120)

        def client() -> httpx.Client:
            c = make_client(server.base_url, token, timeout=60)
            if workers > 1:  # a new connection a request: any worker answers
                c = httpx.Client(
                    base_url=server.base_url,
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=60,
                    limits=httpx.Limits(max_keepalive_connections=0),
                    trust_env=False,
                )
            return c

        t = time.perf_counter()
        with client() as c:
            for k in range(6 * workers):  # every worker builds its index before the loop
                c.get("/api/search/", params={"q": others[k % len(others)], "mode": "hybrid"})
        print(f"  (warm-up, {workers} worker(s): {time.perf_counter() - t:.1f}s)", flush=True)
        mcp = McpWorker(server.base_url, token, 60)
        search_times: list[float] = []
        found_after: list[float] = []
        edit_times: list[float] = []
        with client() as c:
            for i, note in enumerate(short):
                topic = corpus.topic()
                content = corpus.text(corpus.rng.randint(1000, 2000), topic)
                t = time.perf_counter()
                result = mcp.call_tool(
                    "update_item", {"id": str(note.pk), "type": "note", "content": content}
                )
                answered = time.perf_counter()
                edit_times.append(answered - t)
                assert not result.isError, result.content
                t = time.perf_counter()
                r = c.get("/api/search/", params={"q": others[i % len(others)], "mode": "hybrid"})
                search_times.append(time.perf_counter() - t)
                assert r.status_code == 200, r.text[:300]
                found = float("inf")
                while time.perf_counter() - answered < 10:
                    r = c.get(
                        "/api/search/",
                        params={"q": content[:200], "mode": "semantic", "limit": 10},
                    )
                    if str(note.pk) in [x["id"] for x in r.json()["results"]]:
                        found = time.perf_counter() - answered
                        break
                    time.sleep(0.1)
                found_after.append(found)
        mcp.close()
        hits = [f for f in found_after if f != float("inf")]
        print(
            f"agent loop over HTTP, {workers} worker(s), x{len(short)}: hybrid p50 "
            f"{pct(search_times, 0.5):.0f} ms, p95 {pct(search_times, 0.95):.0f} ms; MCP edit p50 "
            f"{pct(edit_times, 0.5):.0f} ms; edit found by semantic {len(hits)}/{len(short)}, "
            f"p50 {pct(hits or [0], 0.5):.0f} ms, max {max(hits or [0]) * 1000:.0f} ms after the "
            f"edit's answer; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    finally:
        server.stop()


def measure_owners_http(owners: int, port: int) -> None:
    """``owners`` owners' hybrid searches round-robin over HTTP (1 worker): p50, and the web
    process's RSS above its idle RSS (started, one list served)."""
    from harness import make_client

    from content.models.search import SearchChunk

    tokens = [issue_token(f"o{n}") for n in range(owners)]
    chunks = SearchChunk.objects.filter(owner__username="o0").count()
    server = server_for(1, port)
    server.start()
    queries = ["upgrade the cluster nodes", "baking bread at home", "tax receipts", "backup"]
    try:
        server.wait_ready(tokens[0], timeout=120)
        time.sleep(2)
        idle = server.rss_kb() / 1024
        clients = [make_client(server.base_url, tok, timeout=120) for tok in tokens]
        samples: list[float] = []
        for r in range(5):
            for n, c in enumerate(clients):
                t = time.perf_counter()
                resp = c.get("/api/search/", params={"q": queries[(r + n) % 4], "mode": "hybrid"})
                samples.append(time.perf_counter() - t)
                assert resp.status_code == 200, resp.text[:300]
        after = server.rss_kb() / 1024
        peak = server.hwm_kb() / 1024
        for c in clients:
            c.close()
        print(
            f"{owners} owners x {chunks} chunks round-robin x5 over HTTP: hybrid p50 "
            f"{pct(samples, 0.5):.0f} ms, p95 {pct(samples, 0.95):.0f} ms; web RSS idle "
            f"{idle:.0f} MB, after {after:.0f} MB (+{after - idle:.0f} MB; peak {peak:.0f} MB); "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    finally:
        server.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--database-url", help="a PostgreSQL server (default: SQLite)")
    ap.add_argument("--db-name", default="tiddly_bench_living", help="the corpus's database")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="keep the database: build only what is missing, then measure",
    )
    ap.add_argument("--build-only", action="store_true", help="build the corpus and stop")
    ap.add_argument(
        "--no-build", action="store_true", help="with --reuse: measure the corpus as it is"
    )
    ap.add_argument("--app-dir", type=Path, default=ROOT, help="the code to measure (a worktree)")
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--loops", type=int, default=200)
    ap.add_argument("--owners", type=int, default=20)
    ap.add_argument("--port", type=int, default=0, help="first port of the servers (default: free)")
    ap.add_argument(
        "--only",
        default="prompts,recall,loop,http1,http2,owners",
        help="rows to run: prompts, recall, loop (in-process), http1, http2, owners",
    )
    args = ap.parse_args()
    setup_db(args.database_url, args.db_name, reuse=args.reuse)
    scale_thresholds(args.scale)
    if not args.no_build:
        build(args)
    if args.build_only:
        return
    from django.contrib.auth import get_user_model
    from harness import free_port

    from content.queries import lists
    from content.search import ranking

    user = get_user_model().objects.get(username="bench")
    rows = set(args.only.split(","))
    corpus = Corpus(int(time.time()))  # edits differ from run to run (a reused corpus)
    t = time.perf_counter()
    ranking.search(user, ["note", "prompt"], lists.ListParams(q="warm up", limit=20), mode="hybrid")
    print(
        f"first search (index build): {time.perf_counter() - t:.1f}s; load {os.getloadavg()[0]:.1f}"
    )
    if "prompts" in rows:
        measure_prompts(user)
    if "recall" in rows:
        measure_recall(user, recall_notes(user, spare=args.loops))
    if "loop" in rows:
        measure_agent_loop_inprocess(user, args.loops, corpus)
    for workers in (1, 2):
        if f"http{workers}" in rows:
            port = args.port + workers if args.port else free_port()
            measure_agent_loop_http(user, args.loops, corpus, workers, port)
    if "owners" in rows:
        measure_owners_http(args.owners, args.port + 3 if args.port else free_port())


if __name__ == "__main__":
    main()
