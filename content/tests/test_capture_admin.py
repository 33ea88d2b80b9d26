"""Page capture in the admin (SPEC §15): column, filter, "Capture again", details."""

from __future__ import annotations

from typing import Any

import pytest

from content.history import Actor
from content.models import Bookmark, CaptureStatus, PageCapture
from content.services.items import CreateOptions, create_item, item_fields

pytestmark = pytest.mark.django_db


def test_list_filter_and_capture_again(staff_client: Any, staff: Any) -> None:
    captured = create_item(
        owner=staff,
        model=Bookmark,
        data=item_fields({"url": "https://example.org/a"}),
        actor=Actor(),
    )
    plain = create_item(
        owner=staff,
        model=Bookmark,
        data=item_fields({"url": "https://example.org/b"}),
        actor=Actor(),
        options=CreateOptions(capture=False),
    )
    url = "/admin/content/bookmark/"
    page = staff_client.get(url, {"capture": "pending"})
    assert page.status_code == 200
    text = page.content.decode()
    assert "example.org/a" in text
    assert "example.org/b" not in text
    never = staff_client.get(url, {"capture": "never"}).content.decode()
    assert "example.org/b" in never
    assert "example.org/a" not in never

    response = staff_client.post(
        url, {"action": "capture_again", "_selected_action": [str(plain.pk)]}, follow=True
    )
    assert response.status_code == 200
    assert PageCapture.objects.get(pk=plain.pk).status == CaptureStatus.PENDING
    detail = staff_client.get(f"{url}{captured.pk}/change/")
    assert detail.status_code == 200
    assert "pending" in detail.content.decode()
    assert Bookmark.objects.count() == 2
