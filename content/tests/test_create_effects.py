"""A write owns its side effects (SPEC §10, §15): a bookmark created without content is captured
whichever door it came through, decided once in the item service; the task workers' pollers and
periodic tasks are registered when the app starts, not by importing a module."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from django.test import Client

from content import services
from content.history import Actor
from content.models import Bookmark, CaptureStatus, PageCapture
from content.services import sharing

pytestmark = pytest.mark.django_db


def pending(bookmark_id: Any) -> bool:
    return PageCapture.objects.filter(pk=bookmark_id, status=CaptureStatus.PENDING).exists()


def test_the_capture_page_captures_what_it_saves(owner: Any) -> None:
    client = Client()
    client.force_login(owner)
    response = client.post("/capture/", {"url": "https://example.com/a", "title": "A"})
    bookmark = Bookmark.objects.get(owner=owner)
    assert response.status_code == 303  # to the saved bookmark in the library
    assert str(bookmark.pk) in response["Location"]
    assert pending(bookmark.pk)


def test_a_door_added_later_captures_by_calling_the_item_service(owner: Any) -> None:
    bookmark = services.create_item(
        owner=owner,
        model=Bookmark,
        data={"url": "https://example.com/new-door"},
        actor=Actor(source="library"),
    )
    assert pending(bookmark.pk)
    assert bookmark.capture.status == CaptureStatus.PENDING


def test_the_item_service_keeps_content_and_capture_false_uncaptured(owner: Any) -> None:
    actor = Actor(source="library")
    with_content = services.create_item(
        owner=owner,
        model=Bookmark,
        data={"url": "https://example.com/c", "content": "mine"},
        actor=actor,
    )
    declined = services.create_item(
        owner=owner,
        model=Bookmark,
        data={"url": "https://example.com/d"},
        actor=actor,
        options=services.CreateOptions(capture=False),
    )
    assert not PageCapture.objects.filter(pk__in=[with_content.pk, declined.pk]).exists()


def test_a_saved_copy_of_a_shared_bookmark_is_captured(owner: Any, other: Any) -> None:
    shared = services.create_item(
        owner=other,
        model=Bookmark,
        data={"url": "https://example.com/shared"},
        actor=Actor(source="test"),
        options=services.CreateOptions(capture=False),
    )
    copy = sharing.save_copy(owner=owner, item=shared, actor=Actor(source="share-copy"))
    assert pending(copy.pk)


def test_page_html_with_capture_false_is_a_400_naming_both_fields(api: Any) -> None:
    response = api.post(
        "/api/bookmarks/",
        {"url": "https://example.com/p", "page_html": "<p>Hi</p>", "capture": False},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "validation_error"
    assert set(body["fields"]) == {"page_html", "capture"}
    assert "page_html" in body["message"]
    assert "capture" in body["message"]
    assert not Bookmark.objects.exists()


REGISTRY_PROBE = """
import importlib, json
import django
django.setup()
from tiddly import tasks
names = lambda items: sorted(f"{i.__module__}.{getattr(i, '__name__', '')}" for i in items)
at_start = {"pollers": names(tasks.pollers()), "periodic": [t.module_path for t in tasks.periodic_tasks()]}
tasks._pollers.clear(); tasks._periodic.clear()
from content.search import indexing
from content.services import retention, webhooks
for module in (indexing, retention, webhooks):
    importlib.reload(module)
after_import = {"pollers": names(tasks.pollers()), "periodic": [t.module_path for t in tasks.periodic_tasks()]}
print(json.dumps({"at_start": at_start, "after_import": after_import}))
"""


def test_background_work_is_registered_at_app_start_not_by_importing_modules() -> None:
    # A fresh interpreter: reloading modules here would disturb the other tests' registry.
    out = subprocess.run(
        [sys.executable, "-c", REGISTRY_PROBE], capture_output=True, text=True, check=True
    ).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert found["at_start"] == {
        "pollers": [
            "content.search.indexing.poll_marks",
            "content.services.webhooks.dispatch",
            "tiddly.sqlite.base.checkpoint",
        ],
        "periodic": ["content.services.retention.prune_task"],
    }
    assert found["after_import"] == {"pollers": [], "periodic": []}
