"""The reads every request of one item makes (the item, its tags) are built and compiled once per
shape (``tiddly.compiled``) and run with each request's own values: another person's item, another
item, a moment that has passed since are never the first request's."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from content import services
from content.history import Actor
from content.models import Note
from content.queries import ItemRef
from content.queries.items import get_owned, get_owned_head, item_query
from content.services import items as item_services
from content.tests.editing_support import make_item
from prompts.models import Prompt
from tiddly import compiled
from tiddly.errors import NotFound

pytestmark = pytest.mark.django_db


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The shapes compiled from here on."""
    compiled._plans.clear()
    seen: list[Any] = []
    real = compiled._compile

    def counting(query: compiled.Shaped, *, single: bool) -> Any:
        seen.append(query.shape)
        return real(query, single=single)

    monkeypatch.setattr(compiled, "_compile", counting)
    return seen


def _compiled(compiles: list[Any], shape: Any) -> int:
    """How many times ``shape`` (or a step of it: PostgreSQL's read of an item's stored size)
    was compiled."""
    return sum(1 for s in compiles if s == shape or (isinstance(s, tuple) and s[0] == shape))


def test_one_shape_compiled_once_serves_every_owner_and_item(
    owner: Any, other: Any, compiles: list[Any]
) -> None:
    mine = make_item(owner, "note", title="Mine", content="my text", tags=["b-tag", "a-tag"])
    second = make_item(owner, "note", title="Second", content="second text")
    theirs = make_item(other, "note", title="Theirs", content="their text", tags=["secret"])

    found = get_owned(owner, ItemRef(Note, pk=mine.pk))
    assert (found.pk, found.title, found.content) == (mine.pk, "Mine", "my text")
    assert found.owner_id == owner.pk
    assert found.created_at == Note.objects.get(pk=mine.pk).created_at  # converted, aware
    assert found.tag_names() == ["a-tag", "b-tag"]
    assert get_owned(owner, ItemRef(Note, pk=second.pk)).content == "second text"
    assert get_owned(owner, ItemRef(Note, pk=second.pk)).tag_names() == []
    assert get_owned(other, ItemRef(Note, pk=theirs.pk)).tag_names() == ["secret"]
    with pytest.raises(NotFound):
        get_owned(owner, ItemRef(Note, pk=theirs.pk))
    with pytest.raises(NotFound):
        get_owned(other, ItemRef(Note, pk=mine.pk))
    assert _compiled(compiles, ("item", False, False)) == 1
    assert _compiled(compiles, ("tag names", Note)) == 1


def test_a_compiled_read_is_one_query_with_the_requests_values(owner: Any, other: Any) -> None:
    theirs = make_item(other, "note", content="theirs")
    get_owned(other, ItemRef(Note, pk=theirs.pk))  # compiled with the other person's values
    note = make_item(owner, "note", content="text")
    sent: list[list[Any]] = []

    def keep(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        sent.append(list(params or ()))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        item = get_owned(owner, ItemRef(Note, pk=note.pk))
    assert item.content == "text"
    assert len(sent) == 1
    values = {str(p).replace("-", "") for p in sent[0]}
    assert str(owner.pk) in values
    assert note.pk.hex in values
    assert str(other.pk) not in values
    assert theirs.pk.hex not in values


def test_a_name_is_looked_up_among_active_items_at_the_requests_moment(
    owner: Any, compiles: list[Any]
) -> None:
    soon = make_item(owner, "prompt", name="soon-archived", content="Hello")
    make_item(owner, "prompt", name="stays", content="Stays")
    assert get_owned(owner, ItemRef(Prompt, name="soon-archived")).pk == soon.pk
    Prompt.objects.filter(pk=soon.pk).update(archived_at=timezone.now() + timedelta(hours=1))
    assert get_owned(owner, ItemRef(Prompt, name="soon-archived")).pk == soon.pk  # not yet
    Prompt.objects.filter(pk=soon.pk).update(archived_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(NotFound):
        get_owned(owner, ItemRef(Prompt, name="soon-archived"))
    assert get_owned(owner, ItemRef(Prompt, name="stays")).content == "Stays"
    with pytest.raises(NotFound):  # no prompt can hold a NUL: nothing is asked of the database
        get_owned(owner, ItemRef(Prompt, name="bad\x00name"))
    assert _compiled(compiles, ("named", False, "name")) == 1


def test_a_locked_read_leaves_trashed_items_unless_asked(owner: Any) -> None:
    note = make_item(owner, "note", content="text")
    Note.objects.filter(pk=note.pk).update(deleted_at=timezone.now())
    ref = ItemRef(Note, pk=note.pk)
    with pytest.raises(NotFound):
        item_services.locked_item(owner, ref, lock=False)
    assert item_services.locked_item(owner, ref, lock=False, allow_deleted=True).pk == note.pk
    head = get_owned_head(owner, ref)  # any state, without the content
    assert head.pk == note.pk
    assert head.get_deferred_fields() >= {"content", "title"}


def test_a_write_reads_the_row_it_locks_with_its_current_content(owner: Any) -> None:
    note = make_item(owner, "note", content="one two")
    ref = ItemRef(Note, pk=note.pk)
    for old, new in (("one", "uno"), ("two", "dos"), ("uno", "eins")):
        services.edit_content(owner=owner, ref=ref, old_str=old, new_str=new, actor=Actor())
    assert Note.objects.get(pk=note.pk).content == "eins dos"
    query = item_query(owner, ref, lock=True, live=True)
    assert isinstance(query, compiled.Shaped)
    assert compiled.one(query).content == "eins dos"


def test_a_shape_whose_value_is_not_a_parameter_is_never_kept(owner: Any) -> None:
    """A value baked into the SQL would answer every later request with the first one's: such a
    query runs through the ORM each time instead."""
    first = make_item(owner, "note", title="First")
    second = make_item(owner, "note", title="Second")

    def baked(pk: Any) -> Any:
        return Note.objects.extra(where=[f"id = '{pk.hex}'"])

    for item in (first, second):
        query = compiled.Shaped(Note, "baked", baked, (item.pk,))
        assert compiled.one(query).title == item.title
    assert compiled._plans[(connection.alias, connection.vendor, True, Note, "baked")] is None
