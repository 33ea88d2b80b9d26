"""``manage.py reindex`` (SPEC §16): rebuilds, resumes, per user, refuses an unknown user."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from content.models.search import SearchChunk, SearchDirty
from content.tests.search_support import _fresh_index, index, make_note  # noqa: F401

pytestmark = pytest.mark.django_db


def test_reindex_rebuilds_all_vectors_of_one_user(api: Any, other_api: Any, owner: Any) -> None:
    mine = make_note(api, "Sourdough", "bake")
    theirs = make_note(other_api, "Guitar", "chords")
    index()
    SearchChunk.objects.all().update(model="old-model")
    out = io.StringIO()
    call_command("reindex", "--user", owner.username, "--no-progress", stdout=out)
    assert "Indexed 1 items" in out.getvalue()
    assert set(SearchChunk.objects.filter(item_id=mine).values_list("model", flat=True)) == {
        "wordllama/l2_supercat-256"
    }
    assert set(SearchChunk.objects.filter(item_id=theirs).values_list("model", flat=True)) == {
        "old-model"
    }
    assert not SearchDirty.objects.exists()


def test_reindex_resumes_what_is_still_marked(api: Any) -> None:
    first = make_note(api, "One", "a")
    make_note(api, "Two", "b")
    index()
    owner_id = SearchChunk.objects.values_list("owner_id", flat=True).first()
    SearchDirty.objects.create(owner_id=owner_id, item_type="note", item_id=first)
    out = io.StringIO()
    call_command("reindex", "--no-progress", stdout=out)
    assert "Resuming" in out.getvalue()
    assert "Indexed 1 items" in out.getvalue()


def test_reindex_unknown_user_is_an_error() -> None:
    with pytest.raises(CommandError, match="No user"):
        call_command("reindex", "--user", "nobody", "--no-progress")
