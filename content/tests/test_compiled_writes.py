"""The rows every write adds or changes (the item, its history version, its change) go through
statements compiled once per model and columns (``tiddly.compiled.insert`` and ``update``), with
each row's own values, and what a save would have given the instance (its key, its database)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection
from django.db.models.signals import pre_save
from django.utils import timezone

from content import services
from content.history import Actor
from content.models import Change, ItemVersion, Note, Tag
from content.queries import ItemRef
from content.tests.editing_support import make_item
from tiddly import compiled

pytestmark = pytest.mark.django_db


def _kept(kind: str, model: type) -> list[Any]:
    return [
        plan
        for key, plan in compiled._writes.items()
        if key[0] == kind and key[1] == connection.alias and key[3] is model
    ]


def test_each_row_is_written_with_its_own_values_by_one_kept_statement(owner: Any) -> None:
    compiled._writes.clear()
    first = make_item(owner, "note", title="First", content="one", tags=["a"])
    second = make_item(owner, "note", title="Second", content="two")
    rows = {n.pk: n for n in Note.objects.filter(owner=owner)}
    assert (rows[first.pk].title, rows[first.pk].content) == ("First", "one")
    assert (rows[second.pk].title, rows[second.pk].content) == ("Second", "two")
    assert rows[first.pk].created_at == first.created_at
    versions = ItemVersion.objects.filter(owner=owner).order_by("item_id")
    assert sorted((v.item_id, v.version, v.metadata["tags"]) for v in versions) == sorted(
        [(first.pk, 1, ["a"]), (second.pk, 1, [])]
    )
    changes = list(Change.objects.filter(owner=owner).order_by("id"))
    assert [(c.item_id, c.action) for c in changes] == [
        (first.pk, "created"),
        (second.pk, "created"),
    ]
    assert changes[0].id < changes[1].id
    for model in (Note, ItemVersion, Change):  # compiled and kept: not refused
        plans = _kept("insert", model)
        assert len(plans) == 1
        assert plans[0] is not None


def test_an_inserted_row_learns_what_the_database_gave_it(owner: Any) -> None:
    item_id = make_item(owner, "note").pk
    change = Change(owner=owner, item_type="note", item_id=item_id, action="created")
    compiled.insert(change)
    stored = Change.objects.get(pk=change.pk)
    assert change.id == stored.id
    assert change.xid == stored.xid
    assert change._state.adding is False
    assert change._state.db == connection.alias


def test_an_edit_updates_only_the_named_columns_of_its_row(owner: Any) -> None:
    compiled._writes.clear()
    note = make_item(owner, "note", title="Kept", content="alpha beta")
    Note.objects.filter(pk=note.pk).update(title="Changed elsewhere")
    for old, new in (("alpha", "gamma"), ("beta", "delta")):
        services.edit_content(
            owner=owner, ref=ItemRef(Note, pk=note.pk), old_str=old, new_str=new, actor=Actor()
        )
    stored = Note.objects.get(pk=note.pk)
    assert stored.content == "gamma delta"
    assert stored.title == "Changed elsewhere"  # not written back by the edit
    assert ItemVersion.objects.filter(item_id=note.pk).count() == 3
    plans = _kept("update", Note)
    assert len(plans) == 1
    assert plans[0] is not None


def test_an_update_of_a_row_that_is_gone_fails_as_save_does(owner: Any) -> None:
    note = make_item(owner, "note", content="text")
    Note.objects.filter(pk=note.pk).delete()
    note.content = "more"
    note.updated_at = timezone.now()
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        compiled.update(note, ["content", "updated_at"])


def test_a_null_is_written_as_null(owner: Any) -> None:
    note = make_item(owner, "note", content="text", description="words")
    for value in (None, "again", None):
        note.description = value
        compiled.update(note, ["description"])
        assert Note.objects.get(pk=note.pk).description == value


def test_a_model_with_a_receiver_is_saved_by_save(owner: Any) -> None:
    """A signal receiver must see the save: such a model's rows go through ``save()``."""
    seen: list[str] = []

    def receiver(sender: Any, instance: Tag, **kwargs: Any) -> None:
        seen.append(instance.name)

    pre_save.connect(receiver, sender=Tag)
    try:
        tag = Tag(owner=owner, name="watched")
        compiled.insert(tag)
        tag.name = "renamed"
        compiled.update(tag, ["name"])
    finally:
        pre_save.disconnect(receiver, sender=Tag)
    assert seen == ["watched", "renamed"]
    assert Tag.objects.get(pk=tag.pk).name == "renamed"
