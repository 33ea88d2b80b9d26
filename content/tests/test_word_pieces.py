"""PostgreSQL: the word pieces a create, update or edit writes itself (content.search.pieces) are
exactly those the trigger writes (content migrations 0023, 0025), and the trigger still keeps
them for every other writer."""

from __future__ import annotations

import importlib
import random
from typing import Any

import pytest
from django.db import connection, transaction
from django.urls import reverse

from content.models import Bookmark, Note
from content.search import pieces
from content.tests.helpers import detail_url, list_url

postgres = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's pieces")

LEDGER = "".join(f"line {i} of the ledger, entry {i * 7}\n" for i in range(5_000))  # 190 000


def stored(table: str, pk: Any) -> list[tuple[int, int, str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT block, part, body_hash, vector::text FROM "{table}_words" '
            "WHERE item_id = %s ORDER BY 1, 2",
            [pk],
        )
        return cursor.fetchall()


def expected(table: str, pk: Any) -> list[tuple[int, int, str, str]]:
    """What the trigger's SQL makes of the row's content now."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.block, p.part, md5(p.body), "
            "to_tsvector('tiddly_english'::regconfig, p.body)::text "
            f'FROM "{table}" t CROSS JOIN LATERAL tiddly_word_pieces(t.content) p '
            "WHERE t.id = %s ORDER BY 1, 2",
            [pk],
        )
        return cursor.fetchall()


@pytest.mark.django_db
@postgres
@pytest.mark.parametrize(
    "content",
    [
        LEDGER * 2,
        "é line of words\n" * 20_000,  # a trailing newline, accents
        ("x" * 250_000 + "\n") * 3 + "tail",  # lines longer than a part
        "ab " * 120_000,  # one line
        "a line\r\n" * 30_000,
        "\n" * 120_000 + "z",
        "🙂 wide characters\n" * 7_000,
        "x" * 100_000,  # exactly the opening: no pieces
        "short",
    ],
    ids=["lines", "trailing", "long-lines", "one-line", "crlf", "blank", "wide", "edge", "short"],
)
def test_the_application_cuts_the_same_pieces_as_the_sql(content: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT block, part, body, md5(body) FROM tiddly_word_pieces(%s) ORDER BY 1, 2",
            [content],
        )
        sql = cursor.fetchall()
    mine = [(b, p, body, pieces.digest(body)) for b, p, body in pieces.split(content)]
    assert mine == sql
    assert (mine == []) == (len(content) <= 100_000)


@pytest.mark.django_db
@postgres
def test_every_service_write_leaves_the_pieces_the_trigger_would(api: Any) -> None:
    url = list_url("note")
    created = api.post(url, {"title": "Ledger", "content": LEDGER + "wombat"}, format="json")
    assert created.status_code == 201
    pk = created.json()["id"]
    first = stored("content_note", pk)
    assert len(first) == 51
    assert first == expected("content_note", pk)

    edit = reverse("note-str-replace", args=[pk])
    body = {"old_str": "line 2600 of the ledger", "new_str": "line 2600 of the quokka ledger"}
    assert api.patch(edit, body, format="json").status_code == 200
    after_edit = stored("content_note", pk)
    assert after_edit == expected("content_note", pk)
    assert [a for a, b in zip(first, after_edit, strict=True) if a != b] == [first[26]]

    # A line inserted early shifts every later block: all of them are rewritten.
    grown = "a new first line\n" + LEDGER + "wombat"
    assert api.patch(detail_url("note", pk), {"content": grown}, format="json").status_code == 200
    assert stored("content_note", pk) == expected("content_note", pk)

    # Shorter but still long: the pieces past its end go.
    short = LEDGER[:120_000]
    assert api.patch(detail_url("note", pk), {"content": short}, format="json").status_code == 200
    assert len(stored("content_note", pk)) == 34
    assert stored("content_note", pk) == expected("content_note", pk)
    # Short: none left (the trigger's work).
    assert api.patch(detail_url("note", pk), {"content": "tiny"}, format="json").status_code == 200
    assert stored("content_note", pk) == []

    listed = api.get(url, {"q": "wombat"}).json()
    assert listed["count"] == 0
    assert Note.objects.get(pk=pk).content == "tiny"


@pytest.mark.django_db
@postgres
def test_a_bookmark_create_and_edit_write_their_pieces(api: Any) -> None:
    body = {"url": "https://example.com/ledger", "title": "L", "content": LEDGER + "numbat"}
    created = api.post(list_url("bookmark"), body, format="json")
    assert created.status_code == 201
    pk = created.json()["id"]
    assert len(stored("content_bookmark", pk)) == 51
    assert stored("content_bookmark", pk) == expected("content_bookmark", pk)
    edit = reverse("bookmark-str-replace", args=[pk])
    body = {"old_str": "numbat", "new_str": "bilby"}
    assert api.patch(edit, body, format="json").status_code == 200
    assert stored("content_bookmark", pk) == expected("content_bookmark", pk)
    found = api.get(list_url("bookmark"), {"q": "bilby ledger"}).json()
    assert [r["id"] for r in found["results"]] == [pk]
    assert Bookmark.objects.get(pk=pk).content.endswith("bilby")


@pytest.mark.django_db
@postgres
def test_the_trigger_leaves_a_row_only_while_the_setting_names_it(api: Any) -> None:
    created = api.post(list_url("note"), {"title": "L", "content": LEDGER}, format="json")
    pk = created.json()["id"]
    before = stored("content_note", pk)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('tiddly.pieces_written', %s, true)", [pk])
        Note.objects.filter(pk=pk).update(content="echidna\n" + LEDGER)
        assert stored("content_note", pk) == before  # told: the trigger did nothing
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('tiddly.pieces_written', true)")
            assert cursor.fetchone() == (pk,)
    # The service's write resets the setting: a later write in its transaction gets the trigger.
    with transaction.atomic():
        edit = reverse("note-str-replace", args=[pk])
        body = {"old_str": "echidna", "new_str": "platypus"}
        assert api.patch(edit, body, format="json").status_code == 200
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('tiddly.pieces_written', true)")
            assert cursor.fetchone() == ("",)
        Note.objects.filter(pk=pk).update(content="wallaby\n" + LEDGER)
        assert stored("content_note", pk) == expected("content_note", pk)
    found = api.get(list_url("note"), {"q": "wallaby"}).json()
    assert [r["id"] for r in found["results"]] == [pk]


def _apply(before: str, spans: list[tuple[int, int, str]]) -> str:
    out, cursor = [], 0
    for start, end, text in spans:
        out += [before[cursor:start], text]
        cursor = end
    return "".join(out) + before[cursor:]


def test_an_edit_cuts_only_the_blocks_it_touched_and_those_are_right() -> None:
    """Random edits of random long contents: whenever ``edited_blocks`` answers, its pieces are
    those ``split`` gives for the new content in every block it names, every part of them, and
    every block it leaves out is unchanged. An edit that adds or removes lines gets None."""
    rng = random.Random(27)
    answered = 0
    for _ in range(150):
        lines = [f"{'x' * rng.randint(0, 80)} {i}" for i in range(rng.randint(2_500, 4_000))]
        if rng.random() < 0.3:
            lines[rng.randrange(len(lines))] = "y" * rng.randint(100_000, 230_000)
        before = "\n".join(lines) + ("\n" if rng.random() < 0.5 else "")
        spans, at = [], 0
        for _ in range(rng.randint(1, 5)):
            start = rng.randint(at, min(len(before), at + len(before) // 3))
            end = min(len(before), start + rng.randint(0, 300))
            newlines = before.count("\n", start, end)
            if rng.random() < 0.8:
                text = "\n".join("z" * rng.randint(0, 50) for _ in range(newlines + 1))
            else:
                text = "q\n" * rng.randint(0, 3)
            spans.append((start, end, text))
            at = end
        after = _apply(before, spans)
        got = pieces.edited_blocks(before, after, spans)
        keeps_lines = all(before.count("\n", s, e) == t.count("\n") for s, e, t in spans)
        assert (got is not None) == (keeps_lines and len(after) > 100_000)
        if got is None:
            continue
        answered += 1
        old = {(b, p): body for b, p, body in pieces.split(before)}
        new = {(b, p): body for b, p, body in pieces.split(after)}
        touched = {b for b, _, _ in got}
        assert {(b, p): body for b, p, body in got} == {
            key: body for key, body in new.items() if key[0] in touched
        }
        assert all(old.get(key) == body for key, body in new.items() if key[0] not in touched)
    assert answered > 50


@pytest.mark.django_db
@postgres
def test_edits_of_several_places_write_what_the_trigger_would(api: Any) -> None:
    content = "".join(f"row {i} holds entry {i * 3}\n" for i in range(6_000))
    created = api.post(list_url("note"), {"title": "R", "content": content}, format="json")
    pk = created.json()["id"]
    edit = reverse("note-str-replace", args=[pk])
    first = stored("content_note", pk)
    edits = [
        {"old_str": "row 499 holds", "new_str": "row 499 (a block's last line) holds"},
        {"old_str": "row 500 holds", "new_str": "row 500 kangaroo"},
        {"old_str": "row 1999 holds entry 5997\nrow 2000", "new_str": "joey\nrow 2000"},
        {"old_str": "row 5999 holds", "new_str": "row 5999, the last,"},
    ]
    response = api.patch(edit, {"edits": edits}, format="json")
    assert response.status_code == 200, response.content
    after = stored("content_note", pk)
    assert after == expected("content_note", pk)
    changed = {a[0] for a, b in zip(first, after, strict=True) if a != b}
    assert changed == {4, 5, 19, 59}
    # Every "holds" at once (more places than are walked block by block), then lines removed.
    body = {"old_str": " holds ", "new_str": " keeps ", "replace_all": True}
    assert api.patch(edit, body, format="json").status_code == 200
    assert stored("content_note", pk) == expected("content_note", pk)
    body = {"old_str": "row 10 keeps entry 30\n", "new_str": ""}
    assert api.patch(edit, body, format="json").status_code == 200
    assert stored("content_note", pk) == expected("content_note", pk)
    found = api.get(list_url("note"), {"q": "kangaroo joey"}).json()
    assert [r["id"] for r in found["results"]] == [pk]


@pytest.mark.django_db
@postgres
def test_0028_cuts_the_pieces_of_existing_contents_again(api: Any) -> None:
    """A database migrated before 0028 holds 500-line blocks: the migration cuts every long
    content again (and its reverse cuts them back), so no item needs a manual step."""
    migration = importlib.import_module("content.migrations.0028_postgres_blocks_of_100_lines")
    created = api.post(list_url("note"), {"title": "L", "content": LEDGER}, format="json")
    pk = created.json()["id"]
    short = api.post(list_url("note"), {"title": "S", "content": "small"}, format="json")
    with connection.cursor() as cursor:
        cursor.execute(migration.blocks_of(500))  # as before 0028
    assert len(stored("content_note", pk)) == 11
    assert stored("content_note", pk) == expected("content_note", pk)
    with connection.cursor() as cursor:
        cursor.execute(migration.blocks_of(100))
    assert len(stored("content_note", pk)) == 51
    assert stored("content_note", pk) == expected("content_note", pk)
    assert [p for b, p, _ in pieces.split(LEDGER) if b == 50] == [0]  # the app cuts the same
    mine = [(b, p, pieces.digest(body)) for b, p, body in pieces.split(LEDGER)]
    assert [(b, p, hashed) for b, p, hashed, _ in stored("content_note", pk)] == mine
    assert stored("content_note", short.json()["id"]) == []
    found = api.get(list_url("note"), {"q": "ledger entry 34993"}).json()
    assert [r["id"] for r in found["results"]] == [pk]


# --- the word sets (content migration 0029) -------------------------------------------------


def word_sets(table: str, pk: Any) -> list[tuple[int, list[str]]]:
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT grp, lexemes FROM "{table}_word_sets" WHERE item_id = %s ORDER BY 1', [pk]
        )
        return [(grp, sorted(lexemes)) for grp, lexemes in cursor.fetchall()]


def expected_sets(table: str, pk: Any) -> list[tuple[int, list[str]]]:
    """Each ten blocks' distinct lexemes, tokenised here from the row's content."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.block / 10, array_agg(DISTINCT x) "
            f'FROM "{table}" t CROSS JOIN LATERAL tiddly_word_pieces(t.content) p, '
            "unnest(tsvector_to_array(to_tsvector('tiddly_english'::regconfig, p.body))) x "
            "WHERE t.id = %s GROUP BY 1 ORDER BY 1",
            [pk],
        )
        return [(grp, sorted(lexemes)) for grp, lexemes in cursor.fetchall()]


@pytest.mark.django_db
@postgres
def test_the_word_sets_follow_every_write_of_the_pieces(api: Any) -> None:
    """Whoever writes the pieces (the service's create and edits, the item's trigger, a delete),
    each ten blocks' set holds exactly the words of their text."""
    created = api.post(list_url("note"), {"title": "L", "content": LEDGER}, format="json")
    pk = created.json()["id"]
    first = word_sets("content_note", pk)
    assert [grp for grp, _ in first] == [0, 1, 2, 3, 4]
    assert first == expected_sets("content_note", pk)
    assert "2600" in first[2][1]
    assert "quokka" not in first[2][1]

    edit = reverse("note-str-replace", args=[pk])
    body = {"old_str": "line 2600 of the ledger", "new_str": "line quokka of the ledger"}
    assert api.patch(edit, body, format="json").status_code == 200
    after = word_sets("content_note", pk)
    assert after == expected_sets("content_note", pk)
    assert "quokka" in after[2][1]
    assert "2600" not in after[2][1]
    assert [a for a, b in zip(first, after, strict=True) if a != b] == [first[2]]

    # The item's trigger (a write that is not the service's), then a shorter content.
    Note.objects.filter(pk=pk).update(content="wallaby\n" + LEDGER[:120_000])
    assert word_sets("content_note", pk) == expected_sets("content_note", pk)
    assert len(word_sets("content_note", pk)) == 4  # 3 157 lines
    assert "wallabi" in word_sets("content_note", pk)[0][1]
    Note.objects.filter(pk=pk).update(content="tiny")
    assert word_sets("content_note", pk) == []

    Note.objects.filter(pk=pk).update(content=LEDGER)
    assert len(word_sets("content_note", pk)) == 5
    Note.objects.filter(pk=pk).delete()
    assert word_sets("content_note", pk) == []


@pytest.mark.django_db
@postgres
def test_a_word_postgresql_parses_as_a_phrase_is_not_looked_up_in_the_sets(api: Any) -> None:
    """ "alpha³beta" is one word to the query parser and the phrase 'alpha' <-> 'beta' to
    PostgreSQL: the sets hold both words of a note that has them apart, and only the pieces say
    whether they are side by side."""
    apart = LEDGER + "alpha\n" + LEDGER[:20_000] + "beta\n"
    together = LEDGER + "the alpha beta line\n"
    url = list_url("note")
    api.post(url, {"title": "apart", "content": apart}, format="json")
    hit = api.post(url, {"title": "together", "content": together}, format="json").json()["id"]
    found = api.get(url, {"q": "alpha³beta"}).json()
    assert [r["id"] for r in found["results"]] == [hit]
    both = api.get(url, {"q": "alpha beta"}).json()
    assert both["count"] == 2


@pytest.mark.django_db
@postgres
def test_0029_builds_the_word_sets_of_existing_contents(api: Any) -> None:
    migration = importlib.import_module("content.migrations.0029_postgres_word_sets")
    note = api.post(list_url("note"), {"title": "L", "content": LEDGER}, format="json").json()
    body = {"url": "https://example.com/l", "title": "B", "content": LEDGER + "bilby"}
    bookmark = api.post(list_url("bookmark"), body, format="json").json()
    with connection.cursor() as cursor:
        for table in migration.TABLES:
            cursor.execute(migration.backwards(table))
        for table in migration.TABLES:
            cursor.execute(migration.forwards(table))
    assert len(word_sets("content_note", note["id"])) == 5
    assert word_sets("content_note", note["id"]) == expected_sets("content_note", note["id"])
    found = word_sets("content_bookmark", bookmark["id"])
    assert found == expected_sets("content_bookmark", bookmark["id"])
    assert "bilbi" in found[-1][1]
    listed = api.get(list_url("bookmark"), {"q": "bilby"}).json()
    assert [r["id"] for r in listed["results"]] == [bookmark["id"]]


@pytest.mark.django_db
@postgres
def test_a_word_set_larger_than_a_tsvector_may_hold_is_kept_whole(api: Any) -> None:
    """Ten blocks of unique words (~1.6 MB of lexemes, a tsvector holds 1 MB): their set is
    taken by sorting, not by merging tsvectors, and keyword search finds the last word."""
    rng = random.Random(29)
    letters = "bcdfghjklmnpqrstvwxz"
    lines = [" ".join("".join(rng.choices(letters, k=8)) for _ in range(200)) for _ in range(1000)]
    created = api.post(list_url("note"), {"title": "W", "content": "\n".join(lines)}, format="json")
    assert created.status_code == 201
    pk = created.json()["id"]
    sets = word_sets("content_note", pk)
    assert sets == expected_sets("content_note", pk)
    assert [grp for grp, _ in sets] == [0]
    assert len(sets[0][1]) > 150_000
    last = lines[-1].split()[-1]
    found = api.get(list_url("note"), {"q": f"{lines[0].split()[0]} {last}"}).json()
    assert [r["id"] for r in found["results"]] == [pk]
