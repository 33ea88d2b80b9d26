"""Rows on one note of each size: create, read, search, str-replace, history."""

from __future__ import annotations

import dataclasses
import json
import re
import uuid

from harness import JSON_HEADERS, Bench, Call, Outcome, Scenario, http_outcome, log, register
from notetext import NoteRef, make_note

# -- create


@dataclasses.dataclass
class CreateState:
    content_json: bytes
    size: int

    def body(self, i: int, worker: int) -> bytes:
        title = json.dumps(f"bench create {self.size} w{worker} #{i}").encode()
        return b'{"title": %b, "content": %b}' % (title, self.content_json)


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
# replace_grow: the line grows and shrinks by 14 characters, as a real edit changes a length
GROW_VALUES = ("alpha", "alpha-longer-longer")


@dataclasses.dataclass
class ReplaceState:
    ref: NoteRef
    tag: str
    values: list[int]  # per worker: index into ``words`` currently in the note
    used: int = 0  # workers used so far
    words: tuple[str, str] = REPLACE_VALUES

    def marker(self, worker: int, value: int) -> str:
        return f"rpl-{self.tag}-w{worker}-{self.words[value]}"

    def markers_in(self, worker: int, content: str) -> list[str]:
        """The worker's whole markers in ``content`` (one value may be a prefix of the other:
        ``replace_grow``'s "alpha" and "alpha-longer-longer")."""
        return re.findall(re.escape(f"rpl-{self.tag}-w{worker}-") + r"[a-z-]*", content)

    def line(self, worker: int) -> int:
        text = self.ref.text
        return text.marker_line if worker == 0 else sorted(text.extra)[worker - 1]


def setup_replace(
    bench: Bench, size: int | None, words: tuple[str, str] = REPLACE_VALUES
) -> ReplaceState:
    assert size is not None
    workers = max(bench.concurrency)
    tag = uuid.uuid4().hex[:8]
    st = ReplaceState(NoteRef("", make_note(1)), tag, [0] * workers, words=words)
    markers = [st.marker(w, 0) for w in range(workers)]
    # Worker 0's marker is the middle marker line itself; the others follow it.
    text = make_note(size, marker=markers[0], extra_markers=markers[1:])
    st.ref = NoteRef(bench.create_note(f"bench replace {size}", text.content), text)
    return st


def setup_replace_grow(bench: Bench, size: int | None) -> ReplaceState:
    return setup_replace(bench, size, GROW_VALUES)


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
    lost = [w for w in range(st.used) if st.markers_in(w, content) != [st.marker(w, st.values[w])]]
    if lost:
        # Resynchronise so the next row starts from the note's real state.
        for w in lost:
            st.values[w] = 1 if st.marker(w, 1) in st.markers_in(w, content) else 0
        return [f"note content disagrees with the acknowledged replaces of workers {lost}"]
    return []


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


register(
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
        "replace_grow",
        op_replace_ok,
        "PATCH str-replace of a unique marker whose length changes (+/- 14 characters)",
        setup=setup_replace_grow,
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
)
