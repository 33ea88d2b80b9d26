"""Recording and reconstructing version history through the services (SPEC §6)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from content import history, services
from content.errors import UrlConflict
from content.history import Actor, clean_source
from content.history import codec as history_codec
from content.history import record as history_record
from content.models import Bookmark, ItemVersion, Note
from content.tests.history_support import (
    current,
    edit,
    large_document,
    make_note,
    numbers,
    ref,
    rows,
    stored_chars,
    update,
)
from prompts.models import Prompt
from tiddly.errors import InvalidTemplate, NotFound

pytestmark = pytest.mark.django_db


# --- what gets recorded -------------------------------------------------------------------------


def test_create_records_version_1_with_metadata_and_the_actor_but_no_copy(owner: Any) -> None:
    note = make_note(owner, "hello", description="d", tags=["b", "a"])
    (row,) = rows(note)
    assert row.version == 1
    assert row.action == "create"
    assert row.owner_id == owner.pk
    assert (row.item_type, row.item_id) == ("note", note.pk)
    assert row.changed_fields == ["content", "description", "tags", "title"]
    assert row.metadata == {"title": "A note", "description": "d", "tags": ["a", "b"]}
    # Version 1's content is the note's own until an edit records version 2.
    assert row.content_snapshot is None
    assert row.content_patch is None
    assert history.reconstruct(note, 1) == "hello"
    assert row.source == "api"
    assert row.token_prefix is None
    assert row.created_at == note.created_at


def test_update_records_the_next_version_with_a_reverse_patch(owner: Any) -> None:
    text = "alpha beta\n" * 10
    note = make_note(owner, text)
    new = text.replace("beta", "gamma", 1)
    update(owner, note, Actor(source="cli", token_prefix="tdly_abc1234"), content=new)
    row = rows(note)[-1]
    assert (row.version, row.action, row.changed_fields) == (2, "update", ["content"])
    assert row.source == "cli"
    assert row.token_prefix == "tdly_abc1234"
    assert history_codec.apply_patch(new, row.content_patch or "") == text
    assert row.content_snapshot is None


def test_metadata_only_update_stores_no_content(owner: Any) -> None:
    note = make_note(owner, "body")
    update(owner, note, title="Renamed", tags=["x"])
    row = rows(note)[-1]
    assert row.changed_fields == ["tags", "title"]
    assert row.metadata == {"title": "Renamed", "description": None, "tags": ["x"]}
    assert row.content_patch is None
    assert row.content_snapshot is None


def test_bookmark_and_prompt_metadata_carry_url_name_and_arguments(owner: Any) -> None:
    bookmark = services.create_item(
        owner=owner, model=Bookmark, data={"url": "https://example.com"}, actor=Actor()
    )
    prompt = services.create_item(
        owner=owner,
        model=Prompt,
        data={"name": "greet", "content": "Hi {{ who }}", "arguments": [{"name": "who"}]},
        actor=Actor(source="mcp-prompts"),
    )
    assert rows(bookmark)[0].metadata["url"] == "https://example.com/"
    meta = rows(prompt)[0].metadata
    assert meta["name"] == "greet"
    assert meta["arguments"] == [{"name": "who", "description": None, "required": False}]
    assert rows(prompt)[0].source == "mcp-prompts"


def test_a_no_op_update_or_str_replace_records_nothing(owner: Any) -> None:
    note = make_note(owner, "same")
    update(owner, note, content="same", title="A note")
    edit(owner, note, "same", "same")
    assert numbers(note) == [1]


def test_a_failed_write_records_nothing(owner: Any) -> None:
    prompt = services.create_item(
        owner=owner,
        model=Prompt,
        data={"name": "p", "content": "Hi {{ who }}", "arguments": [{"name": "who"}]},
        actor=Actor(),
    )
    services.create_item(
        owner=owner, model=Bookmark, data={"url": "https://taken.example"}, actor=Actor()
    )
    bookmark = services.create_item(
        owner=owner, model=Bookmark, data={"url": "https://free.example"}, actor=Actor()
    )
    before = ItemVersion.objects.count()
    with pytest.raises(InvalidTemplate):
        edit(owner, prompt, "{{ who }}", "{{ whom }}")
    with pytest.raises(UrlConflict):
        update(owner, bookmark, url="https://taken.example", title="new title")
    assert ItemVersion.objects.count() == before


def test_state_changes_are_events_without_version_numbers(owner: Any) -> None:
    note = make_note(owner)
    for service in (services.archive_item, services.unarchive_item, services.trash_item):
        service(owner=owner, ref=ref(note), actor=Actor(source="admin"))
    services.restore_item(owner=owner, ref=ref(note), actor=Actor())
    update(owner, note, title="Again")
    events = history.item_versions(note).filter(version__isnull=True).order_by("created_at")
    assert [e.action for e in events] == ["archive", "unarchive", "delete", "undelete"]
    assert events[0].source == "admin"
    assert events[0].metadata["title"] == "A note"
    assert numbers(note) == [1, 2]


def test_permanent_delete_erases_the_items_history_only(owner: Any) -> None:
    doomed, kept = make_note(owner), make_note(owner)
    update(owner, doomed, content="changed")
    services.archive_item(owner=owner, ref=ref(doomed), actor=Actor())
    services.delete_item_permanently(owner=owner, ref=ref(doomed), actor=Actor("api"))
    assert not history.item_versions(doomed).exists()
    assert numbers(kept) == [1]


def test_str_replace_stores_the_known_span_without_diffing_the_document(
    owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = make_note(owner, "first line\nsecond line\n")

    def no_diff(*args: Any) -> str:
        raise AssertionError("str-replace must not diff the whole document")

    monkeypatch.setattr(history_record, "make_patch", no_diff)
    edit(owner, note, "second", "2nd")
    assert rows(note)[-1].content_patch == '[[11,3,"second"]]'


def test_recording_a_version_costs_two_history_queries(owner: Any) -> None:
    note = make_note(owner, "a b c")
    with CaptureQueriesContext(connection) as queries:
        edit(owner, note, "b", "B")
    history_queries = [q["sql"] for q in queries.captured_queries if "itemversion" in q["sql"]]
    assert len(history_queries) == 2, history_queries  # chain state + insert


def test_hundred_single_line_edits_of_a_million_char_note_add_under_1_mb(owner: Any) -> None:
    text = large_document(1_000_000)
    note = make_note(owner, text)
    lines = text.split("\n")
    rng = random.Random(5)
    for index in rng.sample(range(len(lines) - 1), 100):
        edit(owner, note, lines[index], "edited: " + "".join(rng.choices("xyz ", k=40)))
    kept = rows(note)
    assert [row.version for row in kept] == list(range(1, 102))
    added = sum(stored_chars(row) for row in kept[1:])
    assert added < 1_000_000
    assert all(row.content_snapshot is None for row in kept[1:])
    assert history.reconstruct(note, 1) == text


def test_clean_source_trims_lowercases_and_bounds_the_header() -> None:
    assert clean_source("  My-CLI \n") == "my-cli"
    assert clean_source("x" * 500) == "x" * history.MAX_SOURCE_LENGTH
    assert clean_source("   ") == "api"
    assert clean_source(None, default="admin") == "admin"
    assert clean_source("a\x00b\x1bc") == "abc"


# --- snapshots and reconstruction ---------------------------------------------------------------

WORDS = "".join(f"w{index:03d} " for index in range(200))  # 1000 characters, each word unique


def test_reconstruct_returns_every_version_exactly_including_null_and_empty(owner: Any) -> None:
    note = make_note(owner, "v1 text\n")
    expected: dict[int, str | None] = {1: "v1 text\n"}
    for content in ["v2 text\nmore\n", None, "", None, "v6 é😀\r\n", "v6 é😀\r\n!"]:
        update(owner, note, content=content)
        expected[numbers(note)[-1] or 0] = content
    update(owner, note, title="metadata only")
    expected[8] = "v6 é😀\r\n!"
    assert {n: history.reconstruct(note, n) for n in expected} == expected


def test_a_snapshot_is_stored_once_patches_outweigh_the_content(owner: Any) -> None:
    note = make_note(owner, "x" * 100)
    for index in range(4):
        update(owner, note, content=str(index) * 100)
    snapshots = [row.version for row in rows(note) if row.content_snapshot is not None]
    # Each full rewrite stores a ~110-char patch, so the first one already outweighs 100 chars.
    assert snapshots == [2, 3, 4, 5]
    note_small = make_note(owner, WORDS)
    for index in range(5):
        edit(owner, note_small, f"w{index:03d}", "edit")
    assert [r.version for r in rows(note_small) if r.content_snapshot is not None] == []


def test_a_snapshot_is_stored_every_n_versions(owner: Any, settings: Any) -> None:
    settings.TIDDLY_HISTORY_SNAPSHOT_EVERY = 3
    note = make_note(owner, WORDS)
    for index in range(7):
        edit(owner, note, f"w{index:03d}", "edit")
    assert [r.version for r in rows(note) if r.content_snapshot is not None] == [3, 6]
    assert history.reconstruct(note, 1) == WORDS


def test_reconstruct_of_a_missing_version_is_not_found(owner: Any) -> None:
    note = make_note(owner)
    for version in (0, 2, 2**40):
        with pytest.raises(NotFound, match="not in its history"):
            history.reconstruct(note, version)


def test_content_changed_outside_the_services_gives_not_found_not_a_crash(owner: Any) -> None:
    note = make_note(owner, "short")
    update(owner, note, content="short and then some")
    Note.objects.filter(pk=note.pk).update(content="x")
    with pytest.raises(NotFound, match="cannot be reconstructed"):
        history.reconstruct_with_previous(note, 2)
    # Version 1 keeps no copy of its own either: it is reached through version 2's patch.
    with pytest.raises(NotFound, match="cannot be reconstructed"):
        history.reconstruct(note, 1)
    assert current(note) == "x"
