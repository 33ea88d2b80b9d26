"""Share links in the admin: share/unshare actions on item lists, the Share list, revoking."""

from __future__ import annotations

from typing import Any

from django.test import Client

from content.models import HistoryAction, ItemVersion, Share
from content.tests.factories import NoteFactory


def test_share_and_unshare_actions_on_the_item_list(staff_client: Client, staff: Any) -> None:
    note = NoteFactory(owner=staff, title="Mine")
    response = staff_client.post(
        "/admin/content/note/", {"action": "share_selected", "_selected_action": [note.pk]}
    )
    assert response.status_code == 302
    share = Share.objects.get()
    assert share.url == f"http://testserver/s/{share.token}"
    assert Client().get(f"/s/{share.token}").status_code == 200
    staff_client.post(
        "/admin/content/note/", {"action": "unshare_selected", "_selected_action": [note.pk]}
    )
    assert not Share.objects.exists()
    events = ItemVersion.objects.filter(item_id=note.pk).values_list("action", "source")
    assert set(events) == {
        (HistoryAction.SHARE, "admin"),
        (HistoryAction.UNSHARE, "admin"),
    }


def test_share_list_shows_only_own_links_and_revokes(
    staff_client: Client, staff: Any, other: Any
) -> None:
    from content.history import Actor
    from content.models import Note
    from content.queries import ItemRef
    from content.services.sharing import share_item

    mine = NoteFactory(owner=staff, title="Mine")
    theirs = NoteFactory(owner=other, title="Theirs")
    for item in (mine, theirs):
        share_item(owner=item.owner, ref=ItemRef(Note, pk=item.pk), actor=Actor("test"))
    page = staff_client.get("/admin/content/share/").content.decode()
    assert "Mine" in page
    assert "Theirs" not in page
    own = Share.objects.get(owner=staff)
    assert own.token in page
    foreign = Share.objects.get(owner=other)
    staff_client.post(
        "/admin/content/share/",
        {"action": "revoke_selected", "_selected_action": [own.pk, foreign.pk]},
    )
    assert list(Share.objects.values_list("owner", flat=True)) == [other.pk]
    assert Client().get(f"/s/{own.token}").status_code == 404
    assert Client().get(f"/s/{foreign.token}").status_code == 200
    assert ItemVersion.objects.filter(item_id=mine.pk, action=HistoryAction.UNSHARE).exists()
