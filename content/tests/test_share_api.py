"""REST for share links (SPEC §17.4): POST/DELETE /api/{type}/{id}/share/ and items' ``share``."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from content.models import HistoryAction, ItemVersion, Share
from content.tests.factories import BookmarkFactory, NoteFactory, PromptFactory

FACTORIES = {"notes": NoteFactory, "bookmarks": BookmarkFactory, "prompts": PromptFactory}


def _item(owner: Any, kind: str) -> Any:
    return FACTORIES[kind](owner=owner)


@pytest.mark.parametrize("kind", list(FACTORIES))
def test_share_rotate_and_unshare(api: Any, owner: Any, kind: str) -> None:
    item = _item(owner, kind)
    url = f"/api/{kind}/{item.pk}/share/"
    first = api.post(url, format="json")
    assert first.status_code == 201
    body = first.json()
    assert set(body) == {"url", "created_at"}
    share = Share.objects.get()
    assert body["url"] == f"http://testserver/s/{share.token}"
    assert (share.item_type, share.item_id, share.owner_id) == (item.type_name, item.pk, owner.pk)
    assert Client().get(f"/s/{share.token}").status_code == 200
    again = api.post(url, {}, format="json")
    assert (again.status_code, again.json()) == (200, body)
    rotated = api.post(url, {"rotate": True}, format="json")
    assert rotated.status_code == 201
    assert rotated.json()["url"] != body["url"]
    assert Share.objects.count() == 1
    assert Client().get(f"/s/{share.token}").status_code == 404  # the old token stopped at once
    new_token = Share.objects.get().token
    assert Client().get(f"/s/{new_token}").status_code == 200
    assert api.get(f"/api/{kind}/{item.pk}/").json()["share"] == rotated.json()
    deleted = api.delete(url)
    assert deleted.status_code == 204
    assert not Share.objects.exists()
    assert Client().get(f"/s/{new_token}").status_code == 404
    assert api.get(f"/api/{kind}/{item.pk}/").json()["share"] is None
    actions = list(
        ItemVersion.objects.filter(item_id=item.pk, version__isnull=True)
        .order_by("created_at")
        .values_list("action", flat=True)
    )
    assert actions == [HistoryAction.SHARE, HistoryAction.SHARE, HistoryAction.UNSHARE]
    assert api.delete(url).status_code == 204  # unsharing twice is fine


@pytest.mark.parametrize("body", [{"rotate": "yes"}, {"rotate": 1}, {"other": True}, []])
def test_bad_bodies_are_400_and_write_nothing(api: Any, owner: Any, body: Any) -> None:
    item = _item(owner, "notes")
    response = api.post(f"/api/notes/{item.pk}/share/", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert not Share.objects.exists()


def test_stranger_gets_404_and_anonymous_401(
    api: Any, other_api: Any, anon: Any, owner: Any
) -> None:
    item = _item(owner, "bookmarks")
    url = f"/api/bookmarks/{item.pk}/share/"
    assert other_api.post(url, format="json").status_code == 404
    assert other_api.delete(url).status_code == 404
    assert anon.post(url, format="json").status_code == 401
    assert anon.delete(url).status_code == 401
    assert not Share.objects.exists()
    assert api.post(url, format="json").status_code == 201
    assert other_api.delete(url).status_code == 404
    assert Share.objects.count() == 1


def test_items_in_trash_cannot_be_shared_and_shared_ones_hide(api: Any, owner: Any) -> None:
    item = _item(owner, "notes")
    url = f"/api/notes/{item.pk}/"
    token_url = api.post(url + "share/", format="json").json()["url"]
    path = token_url.removeprefix("http://testserver")
    assert api.delete(url).status_code == 204
    assert Client().get(path).status_code == 404
    assert api.post(url + "share/", format="json").status_code == 404
    assert api.post(url + "restore/").status_code == 200
    assert Client().get(path).status_code == 200  # back once restored


def test_public_url_setting_names_the_host(api: Any, owner: Any, settings: Any) -> None:
    settings.TIDDLY_PUBLIC_URL = "https://tiddly.example.com"
    item = _item(owner, "notes")
    body = api.post(f"/api/notes/{item.pk}/share/", format="json").json()
    assert body["url"].startswith("https://tiddly.example.com/s/")


@pytest.mark.parametrize("kind", ["notes", "bookmarks", "prompts", "content"])
def test_lists_carry_share_without_a_query_per_item(api: Any, owner: Any, kind: str) -> None:
    items = [_item(owner, "notes" if kind == "content" else kind) for _ in range(6)]
    plural = "notes" if kind == "content" else kind
    for item in items[:3]:
        api.post(f"/api/{plural}/{item.pk}/share/", format="json")
    api.get(f"/api/{kind}/")
    with CaptureQueriesContext(connection) as few:
        api.get(f"/api/{kind}/", {"limit": 1})
    with CaptureQueriesContext(connection) as many:
        response = api.get(f"/api/{kind}/")
    # (the page of 6 is not full, so it may even skip the count query the page of 1 needs)
    assert len(many.captured_queries) <= len(few.captured_queries)
    shares = {row["id"]: row["share"] for row in response.json()["results"]}
    assert sum(1 for s in shares.values() if s) == 3
    for item in items[:3]:
        assert shares[str(item.pk)]["url"].startswith("http://testserver/s/")
    assert shares[str(items[5].pk)] is None
