"""Every action on an item at the content limit (SPEC §2, §4: 10,000,000 characters by default).

The big note is built once per module (string multiplication, no per-line Python loop) with a
repeated token on every 10th line and one unique marker in the middle — the same shape as the
benchmark. Timing is the benchmark's business; these tests prove nothing fails or degrades into an
error, and that error bodies stay small whatever the document.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.urls import reverse

from content.dbops import FTS_CONTENT_CHARS
from content.models import Note
from content.tests.editing_support import iso, url, versions

pytestmark = pytest.mark.django_db

LIMIT = settings.TIDDLY_MAX_CONTENT_CHARS
LINE_CHARS = 60  # with its newline
TOKEN = "repeatedtoken"
MARKER = "UNIQUE-MARKER-LINE"


def _line(text: str) -> str:
    return text.ljust(LINE_CHARS - 1, ".") + "\n"


FILLER = _line("lorem ipsum dolor sit amet consectetur")
BLOCK = FILLER * 9 + _line(f"every tenth line has the {TOKEN}")
BLOCK_CHARS = len(BLOCK)


def big_content() -> tuple[str, int]:
    """Exactly ``LIMIT`` characters, and the 1-based line of the marker."""
    blocks = LIMIT // BLOCK_CHARS
    half = blocks // 2
    marker_block = _line(MARKER) + BLOCK[LINE_CHARS:]
    content = BLOCK * half + marker_block + BLOCK * (blocks - half - 1)
    content += "z" * (LIMIT - len(content))
    return content, half * 10 + 1


@pytest.fixture(scope="module")
def content() -> tuple[str, int]:
    return big_content()


def test_the_big_content_is_exactly_at_the_limit(content: tuple[str, int]) -> None:
    text, marker_line = content
    assert len(text) == LIMIT
    assert text.count(MARKER) == 1
    assert text.split("\n")[marker_line - 1].startswith(MARKER)


def test_every_action_works_on_a_note_at_the_content_limit(
    api: Any, content: tuple[str, int]
) -> None:
    text, marker_line = content
    total_lines = text.count("\n") + 1
    tokens = text.count(TOKEN)

    # create
    created = api.post(reverse("note-list"), {"title": "Huge note", "content": text}, format="json")
    assert created.status_code == 201, created.content[:300]
    body = created.json()
    note = Note.objects.get(pk=body["id"])
    assert note.content == text
    assert body["content_length"] == LIMIT
    assert body["content_metadata"] == {
        "total_lines": total_lines,
        "start_line": 1,
        "end_line": total_lines,
        "is_partial": False,
    }
    detail = url("note", "detail", note.pk)

    # full GET
    full = api.get(detail)
    assert full.status_code == 200
    assert full.json()["content"] == text

    # partial read around the marker
    partial = api.get(detail, {"start_line": marker_line - 1, "end_line": marker_line + 1})
    assert partial.status_code == 200
    assert partial.json()["content"] == BLOCK[-LINE_CHARS:] + _line(MARKER) + FILLER[:-1]
    assert partial.json()["content_length"] == LIMIT
    assert partial.json()["content_metadata"]["total_lines"] == total_lines

    # search: the marker, then the token on every 10th line
    found = api.get(url("note", "search", note.pk), {"q": MARKER.lower(), "context_lines": 0})
    assert found.status_code == 200
    assert found.json() == {
        "matches": [{"field": "content", "line": marker_line, "context": _line(MARKER)[:-1]}],
        "total_matches": 1,
    }
    repeated = api.get(url("note", "search", note.pk), {"q": TOKEN, "context_lines": 0})
    assert repeated.status_code == 200
    assert repeated.json()["total_matches"] == tokens
    # More matches than TIDDLY_SEARCH_MAX_MATCHES: the first ones are listed, the count is exact.
    listed = min(tokens, settings.TIDDLY_SEARCH_MAX_MATCHES)
    assert len(repeated.json()["matches"]) == listed
    assert repeated.json()["matches"][-1]["line"] == listed * 10
    assert repeated.json().get("truncated", False) is (tokens > listed)

    # str-replace: unique marker succeeds, the token fails small
    edit = url("note", "str-replace", note.pk)
    replaced = api.patch(edit, {"old_str": MARKER, "new_str": "EDITED-MARKER-LINE"}, format="json")
    assert replaced.status_code == 200
    note.refresh_from_db()
    assert replaced.json() == {
        "match_type": "exact",
        "line": marker_line,
        "id": str(note.pk),
        "updated_at": iso(note.updated_at),
    }
    assert note.content == text.replace(MARKER, "EDITED-MARKER-LINE")
    assert [v.version for v in versions(note)] == [1, 2]
    assert versions(note)[-1].content_snapshot is None  # a span patch, not a 10 MB copy

    multiple = api.patch(edit, {"old_str": TOKEN, "new_str": "x"}, format="json")
    assert multiple.status_code == 400
    assert len(multiple.content) < 20_000
    assert multiple.json()["error"] == "multiple_matches"
    assert multiple.json()["total_matches"] == tokens
    assert len(multiple.json()["matches"]) == 20

    # no match at any level (the whole document is normalised and scanned), and whitespace only
    absent = api.patch(edit, {"old_str": "nowhere to be\n  found  ", "new_str": "x"}, format="json")
    assert absent.status_code == 400
    assert absent.json()["error"] == "no_match"
    spaces = api.patch(edit, {"old_str": "   \n   ", "new_str": "x"}, format="json")
    assert spaces.status_code == 400
    assert spaces.json()["error"] == "no_match"

    # growing past the limit is refused, nothing saved
    over = api.patch(edit, {"old_str": "EDITED-MARKER-LINE", "new_str": "X" * 19}, format="json")
    assert over.status_code == 400
    assert over.json()["error"] == "field_limit_exceeded"
    assert over.json()["length"] == LIMIT + 1

    # PATCH: metadata, then the whole content
    patched = api.patch(detail, {"title": "Huge note, renamed"}, format="json")
    assert patched.status_code == 200
    assert patched.json()["content_length"] == LIMIT
    rewritten = "A" + text[1:]
    patched = api.patch(detail, {"content": rewritten}, format="json")
    assert patched.status_code == 200
    note.refresh_from_db()
    assert note.content == rewritten
    assert note.title == "Huge note, renamed"
    assert [v.version for v in versions(note)] == [1, 2, 3, 4]

    # list with q: by title and by content, without the content in the response
    for q in ("renamed", MARKER[:6].lower()):
        listed = api.get(reverse("note-list"), {"q": q})
        assert listed.status_code == 200
        assert [r["id"] for r in listed.json()["results"]] == [str(note.pk)]
        assert listed.json()["results"][0]["content_length"] == LIMIT
        assert "content" not in listed.json()["results"][0]


def test_creating_a_note_one_character_over_the_limit_is_field_limit_exceeded(
    api: Any, content: tuple[str, int]
) -> None:
    text, _ = content

    response = api.post(
        reverse("note-list"), {"title": "Too big", "content": text + "!"}, format="json"
    )

    assert response.status_code == 400
    assert response.json() == {
        "error": "field_limit_exceeded",
        "message": f"content is {LIMIT + 1} characters long; the limit is {LIMIT}. Shorten it "
        "and retry.",
        "field": "content",
        "length": LIMIT + 1,
        "limit": LIMIT,
    }
    assert not Note.objects.exists()


# --- full-text search over a document whose words are all different ----------------------------


def _word(number: int) -> str:
    """A distinct word per number: "q" and five letters (no digits, so the parser keeps it whole)."""
    letters = []
    for _ in range(5):
        number, digit = divmod(number, 26)
        letters.append("abcdefghijklmnopqrstuvwxyz"[digit])
    return "q" + "".join(letters)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="tsvector is PostgreSQL's")
def test_a_note_with_100000_lines_of_distinct_words_saves_and_is_findable(api: Any) -> None:
    lines = [" ".join(_word(n * 8 + k) for k in range(8)) for n in range(100_000)]
    lines[2] += " galloping horses"
    text = "\n".join(lines)
    # Far more distinct lexemes than one tsvector (1 MB) can hold, were all content indexed.
    assert len(set(text.split())) == 800_002
    assert len(text) > 10 * FTS_CONTENT_CHARS

    created = api.post(
        reverse("note-list"), {"title": "Zeppelin inventory", "content": text}, format="json"
    )

    assert created.status_code == 201, created.content[:300]
    note_id = created.json()["id"]
    assert Note.objects.get(pk=note_id).content == text
    first_line_word = lines[0].split()[3]
    last_line_word = lines[-1].split()[5]  # past the indexed opening: substring search finds it
    # "Zeppelins" and "horse gallop" are not substrings: only the (stemmed) tsvector finds them.
    queries = ("zeppelin", "Zeppelins", first_line_word, "horse gallop", last_line_word)
    for q in queries:
        listed = api.get(reverse("note-list"), {"q": q})
        assert listed.status_code == 200, (q, listed.content[:300])
        assert [r["id"] for r in listed.json()["results"]] == [note_id], q

    edited = api.patch(
        url("note", "str-replace", note_id),
        {"old_str": lines[50_000], "new_str": "zeppelin hangar"},
        format="json",
    )
    assert edited.status_code == 200
    assert edited.json()["line"] == 50_001


def test_a_single_line_note_at_the_limit_keeps_every_match_context_small(api: Any) -> None:
    # Minified JSON, CSV exports, base64: one enormous line. Contexts are cut around each match,
    # or every match would carry (and scan) the whole 10 MB line.
    step = 6 * 66_667
    text = ("lorem " * (LIMIT // 6 + 1))[:LIMIT]
    offsets = range(0, LIMIT, step)
    for offset in offsets:
        text = text[:offset] + "ipsum " + text[offset + 6 :]
    assert "\n" not in text
    assert text.count("ipsum") == len(offsets) == 25
    created = api.post(reverse("note-list"), {"title": "One line", "content": text}, format="json")
    assert created.status_code == 201
    note_id = created.json()["id"]
    edit = url("note", "str-replace", note_id)

    found = api.get(url("note", "search", note_id), {"q": "IPSUM"})
    multiple = api.patch(edit, {"old_str": "ipsum", "new_str": "x"}, format="json")
    spaces = api.patch(edit, {"old_str": " ", "new_str": "x"}, format="json")

    assert found.status_code == 200
    assert found.json()["total_matches"] == 25
    assert len(found.content) < 25 * 5_000
    side = 2_000
    middle = offsets[12]
    assert found.json()["matches"][0] == {
        "field": "content",
        "line": 1,
        "context": text[: 5 + side] + "…",
    }
    assert found.json()["matches"][12] == {
        "field": "content",
        "line": 1,
        "context": "…" + text[middle - side : middle + 5 + side] + "…",
    }
    assert multiple.status_code == 400
    assert multiple.json()["total_matches"] == 25
    assert multiple.json()["matches"][1]["context"] == (
        "…" + text[offsets[1] - 250 : offsets[1] + 5 + 250] + "…"
    )
    assert len(multiple.content) < 20_000
    assert spaces.status_code == 400
    assert spaces.json()["error"] == "multiple_matches"
    assert spaces.json()["total_matches"] == text.count(" ")
    assert len(spaces.content) < 20_000
    assert Note.objects.get(pk=note_id).content == text


def test_multiple_matches_of_a_long_old_str_keeps_only_its_ends(api: Any, owner: Any) -> None:
    paragraph = "word " * 2_000  # 10,000 characters, repeated three times
    created = api.post(
        reverse("note-list"),
        {"title": "Repeats", "content": "\n".join([paragraph] * 3)},
        format="json",
    )
    note_id = created.json()["id"]

    response = api.patch(
        url("note", "str-replace", note_id), {"old_str": paragraph, "new_str": ""}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["total_matches"] == 3
    assert response.json()["matches"][0]["context"] == (
        paragraph[:125] + "…" + paragraph[-125:] + "\n" + paragraph[:249] + "…"
    )
    assert len(response.content) < 20_000
