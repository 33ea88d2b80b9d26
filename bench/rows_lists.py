"""Rows over many small items: list with q, list with a saved filter (run first)."""

from __future__ import annotations

import dataclasses

from harness import Bench, Call, Outcome, Scenario, http_outcome, register
from notetext import LIST_WORD, _line

# In the last line of every 10th note (half of LIST_WORD's notes): "LIST_WORD LIST_WORD_2" finds
# those, each word in a different place (the title, the content's end).
LIST_WORD_2 = "wallabybench"

# -- list with q over a corpus of small notes


@dataclasses.dataclass
class ListState:
    notes: int
    matching: int
    matching_both: int = 0


def setup_list(bench: Bench, size: int | None) -> ListState:
    """The list corpus, made once for both list_q rows."""
    made = getattr(bench, "list_state", None)
    if made is not None:
        return made
    n = bench.list_notes
    matching = both = 0
    items = []
    for k in range(n):
        hit = k % 5 == 0
        matching += hit
        both += k % 10 == 0
        word = f" {LIST_WORD}" if hit else ""
        body = "".join(
            _line(k * 3 + j, word[1:] + " " if hit and j == 1 else "") + "\n" for j in range(3)
        )
        if k % 10 == 0:
            body += f"{LIST_WORD_2} closes the note\n"
        items.append((f"list note {k}{word}", body))
    bench.create_notes(items)
    waited = bench.wait_for_index()
    print(f"  (waited {waited:.1f} s for the meaning index to catch up)", flush=True)
    bench.list_state = ListState(n, matching, both)  # type: ignore[attr-defined]
    return bench.list_state  # type: ignore[attr-defined]


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


def op_list_q_words(call: Call) -> Outcome:
    """Two words in different places of a note (SPEC §3.3: every word must match)."""
    st: ListState = call.state
    q = f"{LIST_WORD} {LIST_WORD_2}"
    r = call.client.get("/api/notes/", params={"q": q, "limit": 50})
    problem = None
    if call.warmup and r.status_code == 200:
        d = r.json()
        if d.get("count") != st.matching_both or len(d["results"]) != min(50, st.matching_both):
            problem = f"list q words: count={d.get('count')}, expected {st.matching_both}"
    return http_outcome(r, 200, problem)


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


register(
    Scenario(
        "list_q",
        op_list_q,
        "GET /api/notes/?q=WORD&limit=50 over the list corpus (1 in 5 notes match)",
        setup=setup_list,
        sized=False,
        group="list",
    ),
    Scenario(
        "list_q_words",
        op_list_q_words,
        "GET /api/notes/?q=WORD1 WORD2&limit=50 over the list corpus (1 in 10 notes holds both)",
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
)
