"""The link picker (SPEC §12 in the library, issue 30): ``/library/<type>/<id>/links/`` finds the
person's own items by words and links one with a POST button, through the relationship service
REST and MCP use — without JavaScript, and never showing or linking another person's item."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from content.models import Relationship
from content.tests.factories import BookmarkFactory
from content.tests.test_library_pages import note, page


@pytest.fixture
def browser(owner: Any) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def _picks(body: str) -> str:
    return body.split('id="pick-heading"', 1)[1]


def test_the_reading_page_offers_a_search_for_an_item_to_link(browser: Client, owner: Any) -> None:
    item = note(owner, "Trip plan")
    body = browser.get(page(item)).content.decode()
    assert f'action="{page(item, "library-links")}"' in body
    assert 'method="get"' in body.split('id="links-heading"', 1)[1]


def test_the_picker_lists_only_the_persons_own_matching_items(
    browser: Client, owner: Any, other: Any
) -> None:
    item = note(owner, "Trip plan", "train times")
    mine = note(owner, "Packing list for the trip", "socks")
    note(owner, "Groceries", "milk")
    theirs = note(other, "Their packing list", "secret")
    response = browser.get(page(item, "library-links"), {"q": "packing"})
    assert response.status_code == 200
    picks = _picks(response.content.decode())
    assert "Packing list for the trip" in picks
    assert f'name="target_id" value="{mine.pk}"' in picks
    assert "Groceries" not in picks
    assert "Their packing list" not in picks
    assert str(theirs.pk) not in picks
    assert f'name="target_id" value="{item.pk}"' not in picks  # not itself


def test_without_words_the_picker_offers_recent_items(browser: Client, owner: Any) -> None:
    item = note(owner, "Trip plan")
    bookmark = BookmarkFactory(owner=owner, title="", url="https://example.com/timetable")
    picks = _picks(browser.get(page(item, "library-links")).content.decode())
    assert "example.com/timetable" in picks  # the display title of an untitled bookmark
    assert f'name="target_id" value="{bookmark.pk}"' in picks


def test_the_link_button_links_them_and_the_page_says_so(browser: Client, owner: Any) -> None:
    item = note(owner, "Trip plan")
    mine = note(owner, "Packing list")
    here = page(item, "library-links") + "?q=packing"
    response = browser.post(
        page(item, "library-action", "link"),
        {"target_type": "note", "target_id": str(mine.pk), "next": here},
    )
    assert response.status_code == 302
    assert response["Location"] == here
    link = Relationship.objects.get()
    assert {link.source_id, link.target_id} == {item.pk, mine.pk}
    body = browser.get(here).content.decode()
    assert "Linked." in body
    assert "Packing list" in body.split('id="links-heading"', 1)[1].split('id="pick-heading"')[0]
    assert f'name="target_id" value="{mine.pk}"' not in _picks(body)  # linked: no second button
    assert "(linked)" in _picks(body)
    assert "Packing list" in browser.get(page(mine)).content.decode()  # both ends show it


def test_linking_another_persons_item_by_id_is_a_404_and_links_nothing(
    browser: Client, owner: Any, other: Any
) -> None:
    item = note(owner, "Trip plan")
    theirs = note(other, "Their packing list")
    response = browser.post(
        page(item, "library-action", "link"), {"target_type": "note", "target_id": str(theirs.pk)}
    )
    assert response.status_code == 404
    assert not Relationship.objects.exists()


def test_another_persons_links_page_is_a_404(browser: Client, other: Any) -> None:
    theirs = note(other, "Their packing list")
    assert browser.get(page(theirs, "library-links")).status_code == 404
    assert browser.get(page(theirs, "library-links"), {"q": "packing"}).status_code == 404


def test_a_pasted_address_of_nothing_of_theirs_is_said_on_the_page(
    browser: Client, owner: Any, other: Any
) -> None:
    item = note(owner, "Trip plan")
    theirs = note(other, "Their packing list")
    response = browser.post(page(item, "library-action", "link"), {"target": page(theirs)})
    assert response.status_code == 302
    assert "None of your items has that address" in browser.get(page(item)).content.decode()
    assert not Relationship.objects.exists()
