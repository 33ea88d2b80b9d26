"""Keyword search is the same on both databases (SPEC §3.3, round 4): every word must match,
"phrases", OR, -word, case- and accent-insensitive, over whole contents, or the whole query as a
case-insensitive substring; the same query on the same data finds the same items whichever
database is active. SQLite's word index (content.queries.fulltext) follows every write."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.urls import reverse

from content.models import Bookmark, Note
from content.queries import fulltext
from content.tests.factories import BookmarkFactory, NoteFactory, PromptFactory
from content.tests.helpers import action_url, detail_url, list_url
from content.tests.search_support import _fresh_index, index, make_note, search  # noqa: F401

pytestmark = pytest.mark.django_db

FILLER = "".join(f"filler line {i} of a long runbook\n" for i in range(4_000))  # ~130 000 chars


@pytest.fixture
def corpus(owner: Any, other: Any) -> dict[str, Any]:
    items = {
        "restic": NoteFactory(
            owner=owner,
            title="Backups",
            content="We snapshot with restic.\n" + FILLER + "Then prune.",
        ),
        "restic_only": NoteFactory(owner=owner, title="Check", content="restic check --read-data"),
        "phrase": NoteFactory(owner=owner, title="Fox", content="the quick brown fox"),
        "reversed": NoteFactory(owner=owner, title="Fox 2", content="brown is quick"),
        "cats": NoteFactory(owner=owner, title="Pets", content="cats sleep"),
        "dogs": NoteFactory(owner=owner, title="Pets 2", content="dogs bark"),
        "snake": NoteFactory(owner=owner, title="Zoo", content="python snake"),
        "code": NoteFactory(owner=owner, title="Dev", content="python code"),
        "symbol": NoteFactory(owner=owner, title="Call", content="call my_func(arg) here"),
        "k8s": NoteFactory(owner=owner, title="Ops", content="kubernetes upgrade checklist"),
        "cafe": NoteFactory(owner=owner, title="Café culture", content="Crème brûlée in Zürich"),
        "backup": BookmarkFactory(
            owner=owner, title="Disaster recovery", description="How to backup and restore"
        ),
        "prompt": PromptFactory(
            owner=owner,
            name="summarize-backup",
            title="Summary",
            content="Restore {{ x }}",
            arguments=[{"name": "x"}],
        ),
    }
    # Another owner's items match every query and are never found.
    NoteFactory(owner=other, title="restic prune cats dogs python", content="backup restore")
    return {key: str(item.pk) for key, item in items.items()}


PARITY = [
    ("restic prune", {"restic"}),  # "prune" is ~130 000 characters into the content
    ("RESTIC   Prune", {"restic"}),
    ("restic", {"restic", "restic_only"}),
    ('"quick brown"', {"phrase"}),
    ("quick brown", {"phrase", "reversed"}),
    ("cats OR dogs", {"cats", "dogs"}),
    ("python -code", {"snake"}),
    ("restic -prune", {"restic_only"}),  # "-word" over the whole content too
    ("snapshot -prune", set()),
    ("MY_FUNC(", {"symbol"}),  # a code symbol: the whole query as a substring
    ("kubern", {"k8s"}),  # a partial word
    ("backup restore", {"backup", "prompt"}),
    ("cafe", {"cafe"}),  # accents folded both ways
    ("CAFÉ creme", {"cafe"}),
    ("zurich brulee", {"cafe"}),
    ("the and", set()),  # only stop words: nothing
    ("restic zebra", set()),
]


@pytest.mark.parametrize(("q", "expected"), PARITY)
def test_the_same_query_finds_the_same_items_on_either_database(
    api: Any, corpus: dict[str, str], q: str, expected: set[str]
) -> None:
    want = {corpus[key] for key in expected}
    response = api.get(reverse("content-list"), {"q": q, "limit": 100})
    assert response.status_code == 200
    body = response.json()
    assert {r["id"] for r in body["results"]} == want, q
    assert body["count"] == len(want)
    search = api.get("/api/search/", {"q": q, "mode": "keyword", "limit": 50})
    assert search.status_code == 200
    assert {r["id"] for r in search.json()["results"]} == want, q


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [r["id"] for r in response.json()["results"]]


def test_the_word_index_follows_every_write(api: Any, owner: Any) -> None:
    """Create, edit (str-replace and PATCH), bulk writes, trash, restore, a version restore and
    a permanent delete: list ``q`` finds exactly what the item holds after each."""
    url = list_url("note")
    response = api.post(url, {"title": "Log", "content": FILLER + "wombat"}, format="json")
    assert response.status_code == 201
    pk = response.json()["id"]
    assert ids(api.get(url, {"q": "wombat filler"})) == [pk]
    # An edit deep in the content (same length), then one that shifts it.
    edit = reverse("note-str-replace", args=[pk])
    assert (
        api.patch(edit, {"old_str": "wombat", "new_str": "numbat"}, format="json").status_code
        == 200
    )
    assert ids(api.get(url, {"q": "wombat"})) == []
    assert ids(api.get(url, {"q": "numbat"})) == [pk]
    body = {"old_str": "filler line 7 of", "new_str": "a quokka line 7 of"}
    assert api.patch(edit, body, format="json").status_code == 200
    assert ids(api.get(url, {"q": "quokka numbat"})) == [pk]
    assert Note.objects.get(pk=pk).content.endswith("numbat")
    # The title and description (piece 0's short fields) alone.
    assert (
        api.patch(detail_url("note", pk), {"title": "Platypus"}, format="json").status_code == 200
    )
    assert ids(api.get(url, {"q": "platypus numbat"})) == [pk]
    assert ids(api.get(url, {"q": "log numbat"})) == []
    # Bulk writes.
    Note.objects.filter(pk=pk).update(description="echidna")
    assert ids(api.get(url, {"q": "echidna platypus"})) == [pk]
    bulk = Note.objects.bulk_create([Note(owner=owner, title="Bulk", content="dingo den")])
    assert ids(api.get(url, {"q": "dingo"})) == [str(bulk[0].pk)]
    # Trash and restore (the state, not the words, decides the view).
    assert api.delete(detail_url("note", pk)).status_code == 204
    assert ids(api.get(url, {"q": "numbat"})) == []
    assert ids(api.get(url, {"q": "numbat", "view": "deleted"})) == [pk]
    assert api.post(action_url("note", "restore", pk)).status_code == 200
    assert ids(api.get(url, {"q": "numbat"})) == [pk]
    # A version restore puts the first content back.
    restore = reverse("note-history-restore", kwargs={"pk": pk, "version": 1})
    assert api.post(restore).status_code == 200
    assert ids(api.get(url, {"q": "wombat log"})) == [pk]
    assert ids(api.get(url, {"q": "numbat"})) == []
    # A permanent delete leaves nothing to find, and a new item reuses nothing stale.
    assert api.delete(detail_url("note", pk) + "?permanent=true").status_code == 204
    assert ids(api.get(url, {"q": "wombat", "view": ["active", "deleted", "archived"]})) == []
    again = api.post(url, {"title": "New", "content": "kangaroo"}, format="json").json()["id"]
    assert ids(api.get(url, {"q": "kangaroo"})) == [again]
    assert ids(api.get(url, {"q": "wombat"})) == []
    Bookmark.objects.all().delete()


def test_a_bookmark_and_a_prompt_are_searched_by_their_own_fields(api: Any, owner: Any) -> None:
    mark = BookmarkFactory(
        owner=owner, title="Restic docs", description="how to prune", url="https://example.com/"
    )
    prompt = PromptFactory(
        owner=owner,
        name="weekly-prune",
        title="Cleanup",
        content="{{ a }}",
        arguments=[{"name": "a"}],
    )
    assert ids(api.get(list_url("bookmark"), {"q": "restic prune"})) == [str(mark.pk)]
    assert ids(api.get(list_url("prompt"), {"q": "weekly prune"})) == [str(prompt.pk)]
    assert ids(api.get(list_url("prompt"), {"q": "cleanup"})) == [str(prompt.pk)]


def test_hybrid_holds_what_keyword_mode_finds_deep_in_a_large_note(api: Any) -> None:
    """SPEC §16: hybrid's keyword leg is keyword mode's list over whole contents, so a sentence
    near the end of a large note that keyword mode finds is in hybrid's top 10."""
    marker = "The lighthouse keeper logs every passing ferry."
    lines = "".join(f"Entry {i}: routine maintenance of pumps and valves.\n" for i in range(5_000))
    big = make_note(api, "Plant log", lines + marker + "\nend\n")
    for i in range(12):
        make_note(api, f"Ferry {i}", f"A note on ferries and lighthouses, number {i}.")
    index()
    q = "lighthouse keeper logs passing ferry"
    keyword = [r["id"] for r in search(api, q, mode="keyword")["results"]]
    assert keyword == [big]
    hybrid = search(api, q, mode="hybrid", limit=10)
    assert big in [r["id"] for r in hybrid["results"]]
    assert "degraded" not in hybrid


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's word index")
def test_sqlite_trigger_keeps_a_content_in_16_kib_pieces_and_finds_a_phrase_across_two(
    api: Any,
) -> None:
    # A writer other than the services (here a bulk update) gets the trigger's pieces (content
    # migrations 0021, 0026): 16 KiB each, each sharing 256 bytes with the next.
    head = "word " * 3_276  # 16 380 bytes: "bright" starts 4 bytes before the first boundary
    content = head + "bright lantern\n" + FILLER
    url = list_url("note")
    pk = api.post(url, {"title": "Lamp", "content": "short"}, format="json").json()["id"]
    Note.objects.filter(pk=pk).update(content=content)
    assert ids(api.get(url, {"q": '"bright lantern"'})) == [pk]
    with connection.cursor() as cursor:
        cursor.execute(
            'SELECT count(*), min(start), max(length) FROM "content_note_word_spans" '
            'WHERE rowid / 4096 = (SELECT key FROM "content_note_search_key" WHERE id = %s)',
            [Note.objects.get(pk=pk).pk.hex],
        )
        assert cursor.fetchone() == (-(-len(content.encode()) // 16_384), 1, 16_640)
    edit = reverse("note-str-replace", args=[pk])
    body = {"old_str": "bright lantern", "new_str": "bright candle!"}
    assert api.patch(edit, body, format="json").status_code == 200
    assert ids(api.get(url, {"q": '"bright lantern"'})) == []
    assert ids(api.get(url, {"q": '"bright candle"'})) == [pk]


# 0017's definition of the pieces (with 0028's blocks of 100 lines), frozen here: content
# migration 0023 computes the same ones in one pass (array slices cost time quadratic in the
# number of lines).
SLICED_PIECES = """
  WITH lines AS (
    SELECT string_to_array(%s::text, E'\\n') AS l WHERE length(%s::text) > 100000
  ), blocks AS (
    SELECT b - 1 AS block, array_to_string(l[(b - 1) * 100 + 1 : b * 100], E'\\n') AS t
    FROM lines, generate_series(1, (cardinality(l) + 99) / 100) AS b
  )
  SELECT block, p, substr(t, p * 100000 + 1, 100200)
  FROM blocks, generate_series(0, greatest(length(t) - 1, 0) / 100000) AS p
  ORDER BY 1, 2
"""


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's word pieces")
@pytest.mark.parametrize(
    "content",
    [
        FILLER * 3,
        "é line of words\n" * 20_000,  # a trailing newline, accents
        ("x" * 250_000 + "\n") * 3 + "tail",  # lines longer than a part
        "ab " * 120_000,  # one line
        "a line\r\n" * 30_000,
        "\n" * 120_000 + "z",
        "short",
    ],
    ids=["lines", "trailing", "long-lines", "one-line", "crlf", "blank", "short"],
)
def test_postgres_cuts_a_content_into_the_same_pieces_in_one_pass(content: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(SLICED_PIECES, [content, content])
        sliced = cursor.fetchall()
        cursor.execute("SELECT * FROM tiddly_word_pieces(%s) ORDER BY 1, 2", [content])
        assert cursor.fetchall() == sliced
    assert (sliced == []) == (len(content) <= 100_000)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's word pieces")
def test_postgres_re_tokenises_only_the_pieces_an_edit_changed(api: Any) -> None:
    """Each piece keeps its text's hash: an edit rewrites the pieces whose hash moved (one here),
    and search follows it."""
    content = "".join(f"line {i} of the ledger\n" for i in range(6_000)) + "wombat"
    url = list_url("note")
    pk = api.post(url, {"title": "Ledger", "content": content}, format="json").json()["id"]

    def pieces() -> dict[tuple[int, int], tuple[str, str]]:
        with connection.cursor() as cursor:
            cursor.execute(
                'SELECT block, part, body_hash, vector::text FROM "content_note_words" '
                "WHERE item_id = %s",
                [pk],
            )
            return {(b, p): (h, v) for b, p, h, v in cursor.fetchall()}

    before = pieces()
    assert len(before) == 61  # 6 001 lines in blocks of 100
    assert all(h is not None for h, _ in before.values())
    edit = reverse("note-str-replace", args=[pk])
    body = {"old_str": "line 2600 of the", "new_str": "line 2600 of the quokka"}
    assert api.patch(edit, body, format="json").status_code == 200
    after = pieces()
    assert after.keys() == before.keys()
    assert [key for key in before if before[key] != after[key]] == [(26, 0)]
    assert "quokka" in after[(26, 0)][1]
    assert ids(api.get(url, {"q": "quokka wombat"})) == [pk]
    # A shorter content drops the pieces past its end.
    body = {"content": "".join(f"line {i} of the ledger\n" for i in range(6_000))[:120_000]}
    assert api.patch(detail_url("note", pk), body, format="json").status_code == 200
    assert len(pieces()) < len(before)
    assert ids(api.get(url, {"q": "wombat"})) == []


# The generated columns' expressions before content 0024 made them a trigger's work.
GENERATED = {
    "content_note": {
        "search_vector": "setweight(to_tsvector('tiddly_english', coalesce(title, '')), 'A') || "
        "setweight(to_tsvector('tiddly_english', coalesce(description, '')), 'B') || "
        "setweight(to_tsvector('tiddly_english', left(coalesce(content, ''), 100000)), 'C')",
        "search_head": "setweight(to_tsvector('tiddly_english', coalesce(title, '')), 'A') || "
        "setweight(to_tsvector('tiddly_english', coalesce(description, '')), 'B')",
        "content_opening": "lower(left(coalesce(content, ''), 100000))",
        "head_text": "lower(coalesce(title, '') || chr(10) || coalesce(description, ''))",
    },
    "content_bookmark": {
        "search_vector": "setweight(to_tsvector('tiddly_english', coalesce(title, '') || ' ' || "
        "coalesce(url, '')), 'A') || "
        "setweight(to_tsvector('tiddly_english', coalesce(description, '')), 'B') || "
        "setweight(to_tsvector('tiddly_english', left(coalesce(content, ''), 100000)), 'C')",
        "search_head": "setweight(to_tsvector('tiddly_english', coalesce(title, '') || ' ' || "
        "coalesce(url, '')), 'A') || "
        "setweight(to_tsvector('tiddly_english', coalesce(description, '')), 'B')",
        "content_opening": "lower(left(coalesce(content, ''), 100000))",
        "head_text": "lower(coalesce(title, '') || ' ' || coalesce(url, '') || chr(10) || "
        "coalesce(description, ''))",
    },
}


def _stale_search_columns(table: str, pk: Any) -> list[str]:
    """The search columns whose stored value differs from their expression's."""
    checks = ", ".join(
        f"{column} IS DISTINCT FROM ({sql})" for column, sql in GENERATED[table].items()
    )
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT {checks} FROM "{table}" WHERE id = %s', [pk])
        row = cursor.fetchone()
    return [column for column, stale in zip(GENERATED[table], row, strict=True) if stale]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's search columns")
def test_postgres_search_columns_follow_every_write(api: Any, owner: Any) -> None:
    """The trigger that keeps them recomputes what changed: after each kind of write every
    column holds exactly its expression's value, and search finds what the item now holds."""
    opening = "".join(f"opening line {i}\n" for i in range(8_000))  # past 100 000 characters
    url = list_url("note")
    note = api.post(url, {"title": "Tarn", "content": opening + "deep wombat"}, format="json")
    assert note.status_code == 201
    pk = note.json()["id"]
    assert _stale_search_columns("content_note", pk) == []
    edit = reverse("note-str-replace", args=[pk])
    for old, new in (("deep wombat", "deep numbat"), ("opening line 5\n", "opening quokka 5\n")):
        assert api.patch(edit, {"old_str": old, "new_str": new}, format="json").status_code == 200
        assert _stale_search_columns("content_note", pk) == []
    assert api.patch(detail_url("note", pk), {"title": "Loch"}, format="json").status_code == 200
    assert (
        api.patch(detail_url("note", pk), {"description": "cold water"}, format="json").status_code
        == 200
    )
    assert _stale_search_columns("content_note", pk) == []
    Note.objects.filter(pk=pk).update(title="Mere")  # a bulk write, past the services
    assert _stale_search_columns("content_note", pk) == []
    assert ids(api.get(url, {"q": "quokka mere"})) == [pk]
    assert ids(api.get(url, {"q": "loch"})) == []

    bookmark = BookmarkFactory(owner=owner, url="https://example.com/tarn", content="peat bog")
    assert _stale_search_columns("content_bookmark", bookmark.pk) == []
    Bookmark.objects.filter(pk=bookmark.pk).update(url="https://example.com/fen")
    assert _stale_search_columns("content_bookmark", bookmark.pk) == []
    assert ids(api.get(list_url("bookmark"), {"q": "fen"})) == [str(bookmark.pk)]


def test_a_query_of_minus_words_only_sees_whole_contents(api: Any, corpus: dict[str, str]) -> None:
    """ "-prune": every item but the one whose content has "prune" ~130 000 characters in."""
    response = api.get(reverse("content-list"), {"q": "-prune", "limit": 100})
    assert response.status_code == 200
    found = {r["id"] for r in response.json()["results"]}
    assert found == set(corpus.values()) - {corpus["restic"]}
    assert response.json()["count"] == len(corpus) - 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's word pieces")
def test_the_lists_whole_content_check_of_minus_words_reads_only_the_owners_long_items(
    api: Any, owner: Any, other: Any
) -> None:
    """A query of "-word"s checks every long item's pieces: the owner's only, not every owner's
    (the list path's ``postgres_deep_hits``)."""
    mine = NoteFactory(owner=owner, title="Mine", content=FILLER + "wombat")
    NoteFactory(owner=other, title="Theirs", content=FILLER)
    clauses = fulltext.parse("-prune")

    def checked(**scope: Any) -> set[str]:
        sql, params = fulltext.postgres_deep_hits("content_note", clauses, **scope)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return {str(row[0]) for row in cursor.fetchall()}

    assert len(checked()) == 2
    assert checked(owner=owner.pk) == {str(mine.pk)}
    response = api.get(list_url("note"), {"q": "-prune"})
    assert response.status_code == 200
    assert [r["id"] for r in response.json()["results"]] == [str(mine.pk)]
