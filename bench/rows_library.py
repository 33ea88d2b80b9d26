"""Rows of the library in the browser (SPEC §9, issue 30), signed in with a session cookie:
``GET /library/`` over the 10 000-item corpus of the organise rows (target p50 ≤ 50 ms) and the
reading page of a note of each size (100 000 lines: target p50 ≤ 150 ms; it renders one window
of lines, never the whole note)."""

from __future__ import annotations

from harness import Bench, Call, Outcome, Scenario, http_outcome, register
from notetext import NoteRef
from rows_lists import OrganiseState, setup_organise

# A signed-in browser's session for the bench user, made the way Django's login makes one.
_SESSION = """
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
user = get_user_model().objects.get(username="bench")
store = import_module(settings.SESSION_ENGINE).SessionStore()
store[SESSION_KEY] = str(user.pk)
store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
store[HASH_SESSION_KEY] = user.get_session_auth_hash()
store.create()
print(store.session_key)
"""
_cookie: dict[str, str] = {}


def session_headers(bench: Bench) -> dict[str, str]:
    if "value" not in _cookie:
        _cookie["value"] = bench.server.manage("shell", "-c", _SESSION).split()[-1]
    return {"Cookie": f"sessionid={_cookie['value']}"}


# What autovacuum does to 10 000 fresh rows within its first minute: without statistics the
# planner takes each type's 5 000 rows for one and sorts them all instead of reading the page from
# the (owner, created_at) index. SQLite keeps none unless asked, so it is left as it is.
_ANALYZE = """
from django.db import connection
if connection.vendor == "postgresql":
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
"""


def setup_library_list(bench: Bench, size: int | None) -> tuple[OrganiseState, dict[str, str]]:
    state = setup_organise(bench, size)
    bench.server.manage("shell", "-c", _ANALYZE)
    return state, session_headers(bench)


def op_library_list(call: Call) -> Outcome:
    _, headers = call.state
    r = call.client.get("/library/", headers=headers)
    problem = None
    if call.warmup and r.status_code == 200 and "of 10000 items" not in r.text.replace(",", ""):
        problem = "library list: the page does not say it holds 10 000 items"
    return http_outcome(r, 200, problem)


def setup_library_read(bench: Bench, size: int | None) -> tuple[NoteRef, dict[str, str]]:
    assert size is not None
    return bench.note(size, "read"), session_headers(bench)


def op_library_read(call: Call) -> Outcome:
    ref, headers = call.state
    r = call.client.get(f"/library/note/{ref.id}/", headers=headers)
    problem = None
    if call.warmup and r.status_code == 200 and "bench read" not in r.text:
        problem = "library reading page: the note's title is missing"
    return http_outcome(r, 200, problem)


register(
    Scenario(
        "library_list_10k",
        op_library_list,
        "GET /library/ (signed in) over 10 000 notes+bookmarks: page 1 of 50, tag chips, filters",
        setup=setup_library_list,
        sized=False,
        group="organise 10k",
    ),
    Scenario(
        "library_read",
        op_library_read,
        "GET /library/note/ID/ (signed in): the reading page, first 200 lines rendered",
        setup=setup_library_read,
    ),
)
