"""The admin for staff (SPEC §9 Round 4): a bookmark's change page shows its share URL and a
"Capture again" button, times read in words, sections are named for people."""

from __future__ import annotations

from typing import Any

from django.test import Client

from content.history import Actor
from content.models import Bookmark, PageCapture
from content.queries import ItemRef
from content.services import create_item
from content.services.sharing import share_item

ACTOR = Actor(source="test")


def _bookmark(owner: Any) -> Bookmark:
    return create_item(owner=owner, model=Bookmark, actor=ACTOR,
                       data={"url": "https://example.com/a"})  # fmt: skip


def test_the_change_page_shows_the_share_url_and_capture_again(
    staff_client: Client, staff: Any
) -> None:
    bookmark = _bookmark(staff)
    share = share_item(owner=staff, ref=ItemRef(Bookmark, pk=bookmark.pk), actor=ACTOR).share
    change = f"/admin/content/bookmark/{bookmark.pk}/change/"
    body = staff_client.get(change).content.decode()
    assert f"/s/{share.token}" in body
    assert 'formaction="capture/"' in body
    assert 'id="capture-again"' in body
    response = staff_client.post(change + "capture/")
    assert response.status_code == 302
    assert response["Location"] == change
    assert PageCapture.objects.get(bookmark=bookmark).status == "pending"


def test_capture_again_on_another_persons_bookmark_is_a_404(
    staff_client: Client, other: Any
) -> None:
    theirs = _bookmark(other)
    before = list(PageCapture.objects.filter(bookmark=theirs).values_list("token", flat=True))
    response = staff_client.post(f"/admin/content/bookmark/{theirs.pk}/change/capture/")
    assert response.status_code == 404
    after = list(PageCapture.objects.filter(bookmark=theirs).values_list("token", flat=True))
    assert after == before  # no new capture request


def test_sections_are_named_for_people(staff: Any) -> None:
    staff.is_superuser = True
    staff.save()
    client = Client()
    client.force_login(staff)
    body = client.get("/admin/").content.decode()
    assert "OAuth applications" in body
    assert "Django OAuth Toolkit" not in body
    assert "Background tasks" in body
    assert "Tasks Database Backend" not in body
    assert "Webhook deliveries" in body
    assert "deliverys" not in body
