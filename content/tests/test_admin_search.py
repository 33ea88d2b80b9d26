"""The item lists' search box by meaning (SPEC §9, §16): ``?mode=hybrid|semantic`` ranks as
``/api/search/`` does, best first, within the sidebar's state and tag; without a mode it is the
substring search; a provider that is down falls back to it and says so."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from content.history import Actor
from content.models import Note
from content.services import ItemRef, archive_item, create_item
from content.tests.search_corpus import NOTES, QUERIES
from content.tests.search_support import _fresh_index, index  # noqa: F401
from content.tests.test_admin import changelist_url, texts
from prompts.models import Prompt

pytestmark = pytest.mark.django_db


def _note(owner: Any, title: str, content: str, tags: list[str] | None = None) -> Any:
    data = {"title": title, "content": content, "tags": tags or []}
    return create_item(owner=owner, model=Note, data=data, actor=Actor(source="test"))


@pytest.fixture
def corpus(staff: Any) -> dict[str, Any]:
    notes = {key: _note(staff, title, content) for key, (title, content) in NOTES.items()}
    index()
    return notes


def listed(client: Client, model: type = Note, **query: str) -> list[Any]:
    response = client.get(changelist_url(model), query)
    assert response.status_code == 200
    return [obj.pk for obj in response.context["cl"].result_list]


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_paraphrase_is_found_by_meaning_best_first(
    staff_client: Client, corpus: dict[str, Any], api: Any, mode: str
) -> None:
    query, target = QUERIES[0]
    assert listed(staff_client, q=query) == []  # the substring search finds nothing
    pks = listed(staff_client, q=query, mode=mode)
    assert pks[0] == corpus[target].pk
    # the same ranking as /api/search/
    rest = api.get("/api/search/", {"q": query, "mode": mode, "limit": 50}).json()["results"]
    assert [str(pk) for pk in pks] == [r["id"] for r in rest]


def test_the_mode_filter_is_offered_and_kept_by_the_search_box(
    staff_client: Client, corpus: dict[str, Any]
) -> None:
    response = staff_client.get(changelist_url(Note, mode="hybrid"))
    assert response.status_code == 200
    page = response.content.decode()
    assert "Meaning and words (hybrid)" in page
    assert "Words (substring)" in page
    assert '<input type="hidden" name="mode" value="hybrid">' in page  # the search form keeps it
    assert "finds by meaning" in page  # the help text says how
    # a mode without a search term is the plain list
    assert len(listed(staff_client, mode="semantic")) == len(NOTES)


def test_state_and_tag_filters_narrow_the_ranking(staff: Any, staff_client: Client) -> None:
    rye = _note(staff, "Rye bread", "Bake rye loaves with a sour starter.", ["baking"])
    old = _note(staff, "Old bread notes", "Baking bread loaves long ago.", ["baking"])
    _note(staff, "Sourdough", "Feed the starter, bake the loaf.")
    archive_item(owner=staff, ref=ItemRef.by_id(Note, str(old.pk)), actor=Actor(source="test"))
    index()
    query = {"q": "baking loaves at home", "mode": "semantic"}
    assert listed(staff_client, tag="baking", state="active", **query) == [rye.pk]
    assert listed(staff_client, tag="baking", state="archived", **query) == [old.pk]
    assert set(listed(staff_client, tag="baking", **query)) == {rye.pk, old.pk}


def test_another_users_items_never_show(staff_client: Client, corpus: dict[str, Any]) -> None:
    stranger = get_user_model().objects.create_user(username="stranger", password="pw")
    theirs = _note(stranger, "Kubernetes cluster upgrade checklist", "Upgrade the cluster.")
    index()
    pks = listed(staff_client, q=QUERIES[0][0], mode="hybrid")
    assert theirs.pk not in pks
    assert pks[0] == corpus["k8s"].pk


def test_prompts_list_searches_by_meaning_too(staff: Any, staff_client: Client) -> None:
    data = {"name": "meeting-actions", "title": "Meeting minutes to action items", "content": "x"}
    prompt = create_item(owner=staff, model=Prompt, data=data, actor=Actor(source="test"))
    other = {"name": "haiku", "title": "Write a haiku about spring", "content": "y"}
    create_item(owner=staff, model=Prompt, data=other, actor=Actor(source="test"))
    index()
    query = "turn what was decided in a discussion into a todo list"
    assert listed(staff_client, Prompt, q=query, mode="hybrid")[0] == prompt.pk


def test_provider_down_falls_back_to_the_substring_search_and_says_so(
    staff_client: Client, corpus: dict[str, Any], settings: Any
) -> None:
    settings.TIDDLY_EMBEDDINGS = "off"
    for mode in ("hybrid", "semantic"):
        response = staff_client.get(changelist_url(Note), {"q": "kubectl", "mode": mode})
        assert response.status_code == 200
        assert [o.pk for o in response.context["cl"].result_list] == [corpus["k8s"].pk]
        assert any("unavailable" in t for t in texts(response)), mode


def test_an_unknown_mode_is_the_substring_search(
    staff_client: Client, corpus: dict[str, Any]
) -> None:
    assert listed(staff_client, q="kubectl", mode="fuzzy") == [corpus["k8s"].pk]
