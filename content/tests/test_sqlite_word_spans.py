"""SQLite: the word index's body pieces and their stored places (content migration 0026,
content.search.pieces). Whoever writes — the service cutting by lines, the trigger cutting by
bytes, or one after the other — the FTS5 index holds exactly the words of the pieces the places
name, and those pieces cover the content; an edit that moves the content re-tokenises a piece
or two, not the rest."""

from __future__ import annotations

import collections
import itertools
import random
import uuid
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from content.models import Bookmark, Note
from content.search import pieces
from content.services.retention import FTS5_SHADOWS, refresh_statistics
from content.tests.helpers import detail_url, list_url

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's word index"),
]

RUNBOOK = "".join(
    f"step {i}: check the {('pump', 'valve', 'gauge')[i % 3]} {i * 7}\n" for i in range(9_000)
)


def key(table: str, pk: Any) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT key FROM "{table}_search_key" WHERE id = %s', [pk.hex])
        return int(cursor.fetchone()[0])


def places(table: str, pk: Any) -> list[tuple[int, int, int, bytes | None]]:
    base = key(table, pk) * pieces.ROWS
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT rowid, start, length, hash FROM "{table}_word_spans" '
            "WHERE rowid > %s AND rowid < %s ORDER BY start",
            [base, base + pieces.ROWS],
        )
        return cursor.fetchall()


def instances(words: str, schema: str = "main") -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS temp.v_{words}")
        cursor.execute(
            f"CREATE VIRTUAL TABLE temp.v_{words} USING fts5vocab({schema}, {words}, instance)"
        )
        cursor.execute(f"SELECT term, doc, col, offset FROM temp.v_{words} ORDER BY 1, 2, 3, 4")
        rows = cursor.fetchall()
        cursor.execute(f"DROP TABLE temp.v_{words}")
    return rows


def assert_index_matches_the_rows(table: str, head: str) -> None:
    """The index equals one built afresh from each row's head and the pieces its places name,
    and those places cover each content from its first byte to its last, in order."""
    blob = "CAST(coalesce(t.content, '') AS BLOB)"
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT k.key, length({blob}) FROM "{table}" t '
            f'JOIN "{table}_search_key" k ON k.id = t.id'
        )
        for item_key, size in cursor.fetchall():
            cursor.execute(
                f'SELECT start, length FROM "{table}_word_spans" WHERE rowid > %s AND '
                "rowid < %s ORDER BY start",
                [item_key * pieces.ROWS, item_key * pieces.ROWS + pieces.ROWS],
            )
            spans = cursor.fetchall()
            covered = 1
            for start, length in spans:
                assert start <= covered < start + length or (start == covered and length == 0)
                covered = start + length
            assert covered == size + 1 or (not spans and size == 0)
        cursor.execute("DROP TABLE IF EXISTS temp.fresh")
        cursor.execute(
            "CREATE VIRTUAL TABLE temp.fresh USING fts5(title, description, body, content='', "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        cursor.execute(
            f"INSERT INTO temp.fresh (rowid, title, description) SELECT k.key * 4096, {head}, "
            f'coalesce(t.description, \'\') FROM "{table}" t JOIN "{table}_search_key" k '
            "ON k.id = t.id"
        )
        cursor.execute(
            f"INSERT INTO temp.fresh (rowid, body) SELECT s.rowid, substr({blob}, s.start, "
            f's.length) FROM "{table}_word_spans" s JOIN "{table}_search_key" k ON '
            f's.rowid / 4096 = k.key JOIN "{table}" t ON t.id = k.id'
        )
    fresh = instances("fresh", "temp")
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE temp.fresh")
    assert instances(f"{table}_words") == fresh


NOTE_HEAD = "coalesce(t.title, '')"


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [r["id"] for r in response.json()["results"]]


def test_cut_covers_the_content_and_an_edit_moves_the_pieces_after_it() -> None:
    rng = random.Random(7)
    texts = [
        RUNBOOK,
        "".join(f"{rng.random():.12f} {'x' * rng.randrange(90)}\n" for _ in range(20_000)),
        "\n" * 300_000,  # lines too short to hash: cut by size
        "y" * 200_000,  # no line at all: cut mid-line
        "é ünïcödé 🙂 line\n" * 20_000,
    ]
    for text in texts:
        data = text.encode()
        cuts = pieces.cut(data)
        assert cuts[0][0] == 0
        assert cuts[-1][1] == len(data)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(cuts))
        assert all(pieces.SMALLEST <= e - s <= pieces.LARGEST for s, e in cuts[:-1])
        if 0 < text.count("\n") * 8 < len(data):  # lines chosen by their bytes
            for _ in range(5):
                at = text.index("\n", rng.randrange(len(text) - 100))
                grown = (text[:at] + " and fourteen!" + text[at:]).encode()
                old = {data[s:e] for s, e in cuts}
                new = [grown[s:e] for s, e in pieces.cut(grown)]
                assert sum(body not in old for body in new) <= 2


def test_recut_walks_near_the_edit_and_gives_what_cut_gives() -> None:
    """``recut`` after random edits (one to three spans, lines added or removed, at the edges
    too) equals ``cut`` of the whole new content, and walks near the edit only."""
    rng = random.Random(11)
    base = [
        RUNBOOK * 2,
        "".join(f"{rng.random():.9f} {'ab ' * rng.randrange(40)}\n" for _ in range(30_000)),
        "é ünïcödé 🙂 line of text\n" * 15_000,
    ]
    for kind, text in enumerate(base):
        for _ in range(40 if kind == 0 else 12):  # (cut by size: an added line moves a cut)
            edits, at = [], 0
            for _ in range(rng.randrange(1, 4)):
                start = rng.randrange(at, min(len(text), at + len(text) // 3))
                end = min(len(text), start + rng.randrange(0, 80))
                edits.append((start, end, rng.choice(["", "x", "new words\n", "\n\n", "é" * 30])))
                at = end + 1
            new = text
            for start, end, piece in reversed(edits):
                new = new[:start] + piece + new[end:]
            old_cuts = pieces.cut(text.encode())
            result = pieces._recut(
                new.encode(),
                new,
                text,
                edits,
                [(n, start + 1, end - start, b"h") for n, (start, end) in enumerate(old_cuts)],
                len(text.encode()),
            )
            assert result is not None
            cuts, prefix, moved = result
            assert cuts == pieces.cut(new.encode())
            assert cuts[:prefix] == old_cuts[:prefix]
            if kind == 1 and len(edits) == 1:  # lines choose the cuts (not by size: no resync)
                assert moved - prefix <= 4


def test_recut_redoes_a_cut_whose_look_ahead_saw_the_edit() -> None:
    # Cut by size: a cut falls after the last line that fits in LARGEST bytes, so a line break
    # added just past it (still within LARGEST of the piece's start) moves that cut.
    text = "log line of the same text\n" * 20_000  # no line chooses: every cut is by size
    old_cuts = pieces.cut(text.encode())
    start = old_cuts[2][0] + pieces.LARGEST - 3
    assert old_cuts[2][1] < start  # past the cut, within its look-ahead
    new = text[:start] + "\n" + text[start:]
    stored = [(n, a + 1, b - a, b"h") for n, (a, b) in enumerate(old_cuts)]
    result = pieces._recut(
        new.encode(), new, text, [(start, start, "\n")], stored, len(text.encode())
    )
    assert result is not None
    assert result[0] == pieces.cut(new.encode())
    assert result[0][2] != old_cuts[2]


def test_a_length_changing_edit_writes_a_piece_or_two_and_keeps_the_rest(api: Any) -> None:
    url = list_url("note")
    response = api.post(url, {"title": "Runbook", "content": RUNBOOK}, format="json")
    assert response.status_code == 201
    pk = response.json()["id"]
    note = Note.objects.get(pk=pk)
    before = places("content_note", note.pk)
    assert len(before) > 10
    assert all(hashed is not None for *_, hashed in before)
    edit = reverse("note-str-replace", args=[pk])
    body = {
        "old_str": "step 4500: check the pump",
        "new_str": "step 4500: check the cormorant pump",
    }
    assert api.patch(edit, body, format="json").status_code == 200
    after = places("content_note", note.pk)
    kept = {rowid for rowid, *_ in before} & {rowid for rowid, *_ in after}
    assert len(after) - len(kept) <= 2  # written anew
    starts = {rowid: start for rowid, start, *_ in before}
    moved = [r for r in after if r[0] in kept and r[1] != starts[r[0]]]
    assert moved  # the pieces after the edit kept their rows, at their new places
    assert ids(api.get(url, {"q": '"cormorant pump"'})) == [pk]
    assert ids(api.get(url, {"q": "step 8999 gauge"})) == [pk]
    assert_index_matches_the_rows("content_note", NOTE_HEAD)
    with connection.cursor() as cursor:
        cursor.execute('SELECT count(*) FROM "content_note_words_written"')
        assert cursor.fetchone()[0] == 0


def test_every_writer_keeps_the_index_exact(api: Any, owner: Any) -> None:
    url = list_url("note")
    pk = api.post(url, {"title": "Log", "content": RUNBOOK}, format="json").json()["id"]
    note_pk = Note.objects.get(pk=pk).pk
    edit = reverse("note-str-replace", args=[pk])
    steps = [
        # the service, another length
        lambda: api.patch(
            edit, {"old_str": "step 10:", "new_str": "step ten, heron:"}, format="json"
        ),
        # the service, the same length: the trigger compares the places in place
        lambda: api.patch(edit, {"old_str": "heron", "new_str": "egret"}, format="json"),
        # PATCH of the whole content, shorter but still long
        lambda: api.patch(
            detail_url("note", pk), {"content": RUNBOOK[5_000:] + "ibis"}, format="json"
        ),
        # a bulk write: the trigger's 16 KiB pieces replace the service's
        lambda: Note.objects.filter(pk=note_pk).update(content="kestrel\n" + RUNBOOK),
        # then the service again, over the trigger's pieces
        lambda: api.patch(
            edit, {"old_str": "kestrel", "new_str": "kestrel and osprey"}, format="json"
        ),
        lambda: api.patch(detail_url("note", pk), {"title": "Aviary"}, format="json"),
        lambda: api.patch(detail_url("note", pk), {"content": "short now, puffin"}, format="json"),
        lambda: api.patch(detail_url("note", pk), {"content": RUNBOOK + "plover"}, format="json"),
    ]
    for step in steps:
        result = step()
        assert getattr(result, "status_code", 200) == 200
        assert_index_matches_the_rows("content_note", NOTE_HEAD)
    assert ids(api.get(url, {"q": "plover aviary"})) == [pk]
    assert ids(api.get(url, {"q": "puffin"})) == []
    assert ids(api.get(url, {"q": "osprey"})) == []
    assert api.delete(detail_url("note", pk) + "?permanent=true").status_code == 204
    assert_index_matches_the_rows("content_note", NOTE_HEAD)
    assert instances("content_note_words") == []
    with connection.cursor() as cursor:
        cursor.execute('SELECT count(*) FROM "content_note_word_spans"')
        assert cursor.fetchone()[0] == 0


def test_a_bookmark_keeps_its_url_in_the_head_and_a_failed_save_leaves_nothing(
    api: Any, owner: Any
) -> None:
    url = list_url("bookmark")
    first = api.post(url, {"url": "https://a.example/", "content": RUNBOOK}, format="json")
    second = api.post(
        url, {"url": "https://b.example/", "content": RUNBOOK + "tern"}, format="json"
    )
    assert first.status_code == second.status_code == 201
    head = "coalesce(t.title, '') || char(10) || coalesce(t.url, '')"
    assert_index_matches_the_rows("content_bookmark", head)
    # The same URL as the other: a 409, and neither the index nor the gate changed.
    taken = {"url": "https://a.example/", "content": RUNBOOK[:-20] + "skua"}
    response = api.patch(detail_url("bookmark", second.json()["id"]), taken, format="json")
    assert response.status_code == 409
    assert_index_matches_the_rows("content_bookmark", head)
    assert ids(api.get(url, {"q": "skua"})) == []
    assert ids(api.get(url, {"q": "tern"})) == [second.json()["id"]]
    with connection.cursor() as cursor:
        cursor.execute('SELECT count(*) FROM "content_bookmark_words_written"')
        assert cursor.fetchone()[0] == 0
    Bookmark.objects.filter(pk=first.json()["id"]).update(url="https://c.example/")
    assert_index_matches_the_rows("content_bookmark", head)
    assert ids(api.get(url, {"q": "c.example"})) == [first.json()["id"]]


def test_a_phrase_across_a_cut_is_found(api: Any) -> None:
    lines = RUNBOOK.splitlines(keepends=True)
    for at in range(200, 3_000):  # a place where a cut falls between the phrase's two words
        content = "".join(lines[:at]) + "lantern\n" + "".join(lines[at:])
        data = content.encode()
        word = data.index(b"lantern")
        if any(word - 30 <= start <= word for start, _ in pieces.cut(data)):
            break
    else:
        pytest.fail("no cut near the phrase")
    # The last word before the cut and the first after it make a phrase only the overlap holds.
    phrase = f'"{lines[at - 1].split()[-1]} lantern"'
    url = list_url("note")
    pk = api.post(url, {"title": "Lamp", "content": content}, format="json").json()["id"]
    assert ids(api.get(url, {"q": phrase})) == [pk]
    assert ids(api.get(url, {"q": '"lantern pump"'})) == []


def test_the_gate_names_only_the_row_being_saved(owner: Any) -> None:
    """While a save names its row, the trigger still cuts every other row's pieces."""
    other = Note.objects.create(owner=owner, title="o", content="gannet")
    note = Note.objects.create(owner=owner, title="n", content="x")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute('INSERT INTO "content_note_words_written" (id) VALUES (%s)', [note.pk.hex])
        Note.objects.filter(pk=other.pk).update(content="albatross " * 10_000)
        cursor.execute('DELETE FROM "content_note_words_written"')
    assert len(places("content_note", other.pk)) == 7  # 0021's 16 KiB pieces, by the trigger
    assert_index_matches_the_rows("content_note", NOTE_HEAD)


def test_a_long_create_cuts_its_pieces_before_its_transaction(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cut and the hashes depend on the text alone: SQLite's write lock (the create's
    transaction) is not held for them, and the pieces written are the same."""
    statements_before_cut: list[list[str]] = []
    real_cut = pieces.cut

    def watched(data: bytes) -> list[tuple[int, int]]:
        statements_before_cut.append([q["sql"] for q in connection.queries])
        return real_cut(data)

    monkeypatch.setattr(pieces, "cut", watched)
    with CaptureQueriesContext(connection):
        response = api.post(
            list_url("note"), {"title": "runbook", "content": RUNBOOK}, format="json"
        )
    assert response.status_code == 201, response.content
    assert len(statements_before_cut) == 1
    opened = [sql for sql in statements_before_cut[0] if sql.startswith(("BEGIN", "SAVEPOINT"))]
    assert opened == [], opened
    pk = uuid.UUID(response.json()["id"])
    assert len(places("content_note", pk)) > 1
    assert_index_matches_the_rows("content_note", NOTE_HEAD)
    found = api.get(list_url("note"), {"q": "gauge 62986"})
    assert ids(found) == [str(pk)]


def test_a_long_content_s_pieces_are_written_in_one_statement_per_table(api: Any) -> None:
    """Not one per piece (executemany): each statement gives the GIL back and waits to take it
    again, with the write lock held."""
    url = list_url("note")
    pk = api.post(url, {"title": "Log", "content": RUNBOOK}, format="json").json()["id"]
    ran: list[str] = []
    connection.ensure_connection()
    connection.connection.set_trace_callback(ran.append)
    try:
        edited = RUNBOOK.replace("step 10:", "step ten, moved:", 1)
        response = api.patch(detail_url("note", pk), {"content": edited}, format="json")
    finally:
        connection.connection.set_trace_callback(None)
    assert response.status_code == 200, response.content
    writes = collections.Counter(
        " ".join(sql.split()[:3]) for sql in ran if sql.startswith(("INSERT", "UPDATE"))
    )
    assert writes['INSERT INTO "content_note_words"'] == 2, writes  # the old pieces' 'delete'
    assert writes['INSERT INTO "content_note_word_spans"'] == 1, writes
    assert writes['UPDATE "content_note_word_spans" SET'] == 1, writes  # the moved pieces
    assert len(places("content_note", uuid.UUID(pk))) > 3
    assert_index_matches_the_rows("content_note", NOTE_HEAD)


FULL_TEXT_TABLES = (
    "content_note_words",
    "content_bookmark_words",
    "prompts_prompt_words",
    "content_note_search",
    "content_bookmark_search",
    "prompts_prompt_search",
)


def test_writes_merge_a_full_text_level_only_once_it_holds_eight_segments(api: Any) -> None:
    """Content 0027 / prompts 0009: every FTS5 table merges at 8 segments a level, not 4, and
    many small writes still leave every word findable."""
    with connection.cursor() as cursor:
        for table in FULL_TEXT_TABLES:
            cursor.execute(f"SELECT v FROM \"{table}_config\" WHERE k = 'automerge'")
            assert cursor.fetchone() == (8,), table
    for i in range(40):
        body = {"title": f"n{i}", "content": f"word{i} common"}
        assert api.post(list_url("note"), body, format="json").status_code == 201
    with connection.cursor() as cursor:
        cursor.execute('SELECT count(DISTINCT segid) FROM "content_note_words_idx"')
        segments = cursor.fetchone()[0]
    assert 4 <= segments < 40  # merged, though less eagerly than four a level
    response = api.get(list_url("note"), {"q": "word17 common"})
    assert [r["title"] for r in response.json()["results"]] == ["n17"]


def test_planner_statistics_leave_the_full_text_tables_alone(api: Any) -> None:
    """``refresh_statistics`` analyses the ordinary tables and drops what an earlier release's
    plain ``ANALYZE`` kept for FTS5's own tables (which slowed every later write to them)."""
    for i in range(3):
        body = {"title": f"n{i}", "content": f"word{i}"}
        assert api.post(list_url("note"), body, format="json").status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        cursor.execute("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'content_note_words_data'")
        assert cursor.fetchone() == (1,)
    refresh_statistics()
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT tbl FROM sqlite_stat1")
        analysed = {row[0] for row in cursor.fetchall()}
    assert "content_note" in analysed
    shadows = {f"{table}_{suffix}" for table in FULL_TEXT_TABLES for suffix in FTS5_SHADOWS}
    assert analysed & shadows == set()
