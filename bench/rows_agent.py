"""Agent-power rows on a 100 000-line note: multi-edit, replace_all, dry run, pathological."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable

from harness import Bench, Call, Outcome, Scenario, http_outcome, register
from notetext import TOKEN, NoteRef, make_note
from rows_notes import setup_read

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


# The rows of a group share everything but the operation: one worker, a fixed count.
POWER = {
    "sizes": (AGENT_LINES,),
    "concurrency": (1,),
    "count": lambda size: 40,
    "group": "agent power",
}
PATHOLOGICAL = {
    "sized": False,
    "concurrency": (1,),
    "count": lambda size: 10,
    "group": "pathological 10 MB",
}

register(
    Scenario(
        "multi_edit_10",
        op_multi_edit,
        "PATCH str-replace with edits: 10 markers at once on a 100,000-line note",
        setup=setup_multi_edit(10),
        **POWER,
    ),
    Scenario(
        "multi_edit_100",
        op_multi_edit,
        "PATCH str-replace with edits: 100 markers at once on a 100,000-line note",
        setup=setup_multi_edit(100),
        **POWER,
    ),
    Scenario(
        "replace_all_10k",
        op_replace_all,
        "PATCH str-replace replace_all of the token on every 10th line (10,000 occurrences)",
        setup=setup_replace_all,
        **POWER,
    ),
    Scenario(
        "dry_run_100k",
        op_dry_run,
        "PATCH str-replace dry_run of the unique marker on a 100,000-line note (diff, no write)",
        setup=setup_read,
        **POWER,
    ),
    Scenario(
        "pathological_no_match",
        op_pathological,
        'PATCH str-replace of "a\\na\\n"*50 on a 10 MB note of alternating "a"/"  a" lines '
        "-> 400 no_match",
        setup=setup_pathological,
        **PATHOLOGICAL,
    ),
    Scenario(
        "replace_all_10m",
        op_replace_all_10m,
        'PATCH str-replace replace_all of "a" <-> "b" on a 10 MB note holding 100,000 of them',
        setup=setup_replace_all_10m,
        **PATHOLOGICAL,
    ),
    Scenario(
        "replace_all_refused",
        op_replace_all_refused,
        'PATCH str-replace replace_all of "a" on a note of 10,000,000 "a"s -> 400 '
        "field_limit_exceeded",
        setup=setup_replace_all_refused,
        **PATHOLOGICAL,
    ),
)
