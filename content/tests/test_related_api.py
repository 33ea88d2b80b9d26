"""``/api/{type}/{id}/related/`` and ``/suggestions/`` (SPEC §16)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from content.tests.helpers import assert_error
from content.tests.search_corpus import NOTES
from content.tests.search_support import _fresh_index, index, make_note  # noqa: F401
from tiddly.models import ApiToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(api: Any) -> dict[str, str]:
    ids = {key: make_note(api, title, content) for key, (title, content) in NOTES.items()}
    ids["bread2"] = make_note(api, "Rye bread", "Bake rye loaves with a sour starter.", ["baking"])
    index()
    return ids


def test_related_lists_nearest_items_without_itself_with_linked_flag(
    api: Any, corpus: dict[str, str]
) -> None:
    link = {
        "source_type": "note",
        "source_id": corpus["bread"],
        "target_type": "note",
        "target_id": corpus["cat"],
    }
    assert api.post("/api/relationships/", link, format="json").status_code == 201
    response = api.get(f"/api/notes/{corpus['bread']}/related/", {"limit": 3})
    assert response.status_code == 200
    results = response.json()["results"]
    assert len(results) == 3
    assert results[0]["id"] == corpus["bread2"]
    assert results[0]["linked"] is False
    assert corpus["bread"] not in [r["id"] for r in results]
    everything = api.get(f"/api/notes/{corpus['bread']}/related/", {"limit": 50}).json()["results"]
    assert {r["id"]: r["linked"] for r in everything}[corpus["cat"]] is True


def test_suggestions_offer_neighbour_tags_never_applied(api: Any, corpus: dict[str, str]) -> None:
    body = api.get(f"/api/notes/{corpus['bread']}/suggestions/").json()
    assert body["tags"][0]["name"] == "baking"
    assert body["related"][0]["id"] == corpus["bread2"]
    assert api.get(f"/api/notes/{corpus['bread']}/").json()["tags"] == []


def test_no_tagged_neighbours_means_no_tag_suggestions(api: Any) -> None:
    pk = make_note(api, "Alone", "nothing here")
    make_note(api, "Other", "also nothing")
    index()
    assert api.get(f"/api/notes/{pk}/suggestions/").json()["tags"] == []


def test_limit_bounds_stranger_and_anonymous(api: Any, other_api: Any, anon: Any) -> None:
    pk = make_note(api, "Mine", "text")
    assert_error(api.get(f"/api/notes/{pk}/related/", {"limit": 51}), 400, "validation_error")
    assert_error(other_api.get(f"/api/notes/{pk}/related/"), 404, "not_found")
    assert_error(other_api.get(f"/api/notes/{pk}/suggestions/"), 404, "not_found")
    assert anon.get(f"/api/notes/{pk}/related/").status_code == 401


def test_related_and_suggestions_show_only_the_types_the_token_may_read(
    api: Any, owner: Any, corpus: dict[str, str]
) -> None:
    prompt = {"name": "bread-baker", "title": "Sourdough bread baking", "content": "Bake"}
    assert api.post("/api/prompts/", prompt, format="json").status_code == 201
    index()
    url = f"/api/notes/{corpus['bread']}/"
    everything = api.get(url + "related/", {"limit": 50}).json()["results"]
    assert "prompt" in {r["type"] for r in everything}
    content_only = APIClient()
    token = ApiToken.issue(owner=owner, name="c", scopes="content:read")[1]
    content_only.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = content_only.get(url + "related/", {"limit": 50})
    assert response.status_code == 200
    assert {r["type"] for r in response.json()["results"]} == {"note"}
    response = content_only.get(url + "suggestions/")
    assert response.status_code == 200
    assert {r["type"] for r in response.json()["related"]} == {"note"}


def test_a_tag_used_only_on_prompts_is_never_suggested_to_a_token_that_cannot_read_prompts(
    api: Any, owner: Any
) -> None:
    pk = make_note(api, "Weekend", "Feed the sourdough and mind the kubernetes cluster.")
    make_note(api, "Ops", "Cluster notes", ["kubernetes"])
    prompt = {"name": "baker", "content": "Bake", "tags": ["sourdough"]}
    assert api.post("/api/prompts/", prompt, format="json").status_code == 201
    index()
    full = {t["name"] for t in api.get(f"/api/notes/{pk}/suggestions/").json()["tags"]}
    assert {"sourdough", "kubernetes"} <= full  # the full token reads prompts: both are offered
    content_only = APIClient()
    token = ApiToken.issue(owner=owner, name="c", scopes="content:read content:write")[1]
    content_only.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = content_only.get(f"/api/notes/{pk}/suggestions/")
    assert response.status_code == 200
    offered = {t["name"] for t in response.json()["tags"]}
    assert "kubernetes" in offered
    assert "sourdough" not in offered
    tags = {t["name"] for t in content_only.get("/api/tags/").json()}
    assert "sourdough" not in tags  # as /api/tags/ hides it
