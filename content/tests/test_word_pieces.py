"""PostgreSQL: the word pieces a create, update or edit writes itself (content.search.pieces) are
exactly those the trigger writes (content migrations 0023, 0025), and the trigger still keeps
them for every other writer."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.urls import reverse

from content.models import Bookmark, Note
from content.search import pieces
from content.tests.helpers import detail_url, list_url

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's word pieces"),
]

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


def test_every_service_write_leaves_the_pieces_the_trigger_would(api: Any) -> None:
    url = list_url("note")
    created = api.post(url, {"title": "Ledger", "content": LEDGER + "wombat"}, format="json")
    assert created.status_code == 201
    pk = created.json()["id"]
    first = stored("content_note", pk)
    assert len(first) == 11
    assert first == expected("content_note", pk)

    edit = reverse("note-str-replace", args=[pk])
    body = {"old_str": "line 2600 of the ledger", "new_str": "line 2600 of the quokka ledger"}
    assert api.patch(edit, body, format="json").status_code == 200
    after_edit = stored("content_note", pk)
    assert after_edit == expected("content_note", pk)
    assert [a for a, b in zip(first, after_edit, strict=True) if a != b] == [first[5]]

    # A line inserted early shifts every later block: all of them are rewritten.
    grown = "a new first line\n" + LEDGER + "wombat"
    assert api.patch(detail_url("note", pk), {"content": grown}, format="json").status_code == 200
    assert stored("content_note", pk) == expected("content_note", pk)

    # Shorter but still long: the pieces past its end go.
    short = LEDGER[:120_000]
    assert api.patch(detail_url("note", pk), {"content": short}, format="json").status_code == 200
    assert len(stored("content_note", pk)) == 7
    assert stored("content_note", pk) == expected("content_note", pk)
    # Short: none left (the trigger's work).
    assert api.patch(detail_url("note", pk), {"content": "tiny"}, format="json").status_code == 200
    assert stored("content_note", pk) == []

    listed = api.get(url, {"q": "wombat"}).json()
    assert listed["count"] == 0
    assert Note.objects.get(pk=pk).content == "tiny"


def test_a_bookmark_create_and_edit_write_their_pieces(api: Any) -> None:
    body = {"url": "https://example.com/ledger", "title": "L", "content": LEDGER + "numbat"}
    created = api.post(list_url("bookmark"), body, format="json")
    assert created.status_code == 201
    pk = created.json()["id"]
    assert len(stored("content_bookmark", pk)) == 11
    assert stored("content_bookmark", pk) == expected("content_bookmark", pk)
    edit = reverse("bookmark-str-replace", args=[pk])
    body = {"old_str": "numbat", "new_str": "bilby"}
    assert api.patch(edit, body, format="json").status_code == 200
    assert stored("content_bookmark", pk) == expected("content_bookmark", pk)
    found = api.get(list_url("bookmark"), {"q": "bilby ledger"}).json()
    assert [r["id"] for r in found["results"]] == [pk]
    assert Bookmark.objects.get(pk=pk).content.endswith("bilby")


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
