"""No capture in limbo (SPEC §15, round 4): unplanned errors end `failed`, non-ASCII URLs are
fetched, long header values fit their column, and preview answers JSON errors, never a 500."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from content.models import Bookmark, CaptureStatus, PageCapture
from content.services import capture as capture_service
from content.tests.helpers import assert_error
from tiddly.tests.outbound_servers import LocalServer, allowed_server

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(settings: Any) -> Iterator[LocalServer]:
    with allowed_server(settings, timeout=2) as srv:
        yield srv


def _create(api: Any, url: str, **extra: Any) -> dict[str, Any]:
    response = api.post("/api/bookmarks/", {"url": url, **extra}, format="json")
    assert response.status_code == 201, response.json()
    return dict(response.json())


def _capture(api: Any, bookmark_id: str) -> dict[str, Any]:
    return dict(api.get(f"/api/bookmarks/{bookmark_id}/").json()["capture"])


@pytest.mark.parametrize("path", ["/café", "/wiki/Bücher"])
def test_a_non_ascii_url_is_captured(
    api: Any, server: LocalServer, run_tasks: Any, path: str
) -> None:
    body = _create(api, server.url + path)
    run_tasks(due_within=15)
    got = _capture(api, body["id"])
    assert got["status"] == "done", got
    assert got["http_status"] == 200
    bookmark = Bookmark.objects.get(pk=body["id"])
    assert bookmark.url == server.url + path  # the bookmark keeps the URL as it was given
    assert bookmark.title == "OG title"
    assert "# Heading" in bookmark.content
    assert server.seen[-1]["path"] in ("/caf%C3%A9", "/wiki/B%C3%BCcher")


def test_an_unplanned_error_ends_the_capture_failed(
    api: Any, server: LocalServer, run_tasks: Any, monkeypatch: Any
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("something nobody planned for")

    monkeypatch.setattr(capture_service, "_extract", broken)
    body = _create(api, server.url + "/page", title="Kept", tags=["t"])
    run_tasks(due_within=15)
    got = _capture(api, body["id"])
    assert got["status"] == "failed"
    assert got["error"].startswith("capture failed on an unexpected error (RuntimeError: ")
    assert f"POST /api/bookmarks/{body['id']}/capture/" in got["error"]
    assert got["finished_at"] is not None
    bookmark = Bookmark.objects.get(pk=body["id"])
    assert (bookmark.url, bookmark.title, bookmark.content) == (server.url + "/page", "Kept", None)
    assert not PageCapture.objects.filter(status=CaptureStatus.PENDING).exists()


def test_a_long_content_type_is_cut_to_its_column(
    api: Any, server: LocalServer, run_tasks: Any
) -> None:
    body = _create(api, server.url + "/long-type")
    run_tasks(due_within=15)
    row = PageCapture.objects.get(pk=body["id"])
    assert row.status == CaptureStatus.SKIPPED
    assert row.content_type == ("application/x-" + "y" * 300)[:200]
    assert row.error.startswith("unsupported content type application/x-yyy")


def test_preview_of_a_non_ascii_url(api: Any, server: LocalServer) -> None:
    response = api.get("/api/bookmarks/preview/", {"url": server.url + "/café"})
    assert response.status_code == 200, response.json()
    assert response.json()["title"] == "OG title"
    assert response.json()["final_url"] == server.url + "/caf%C3%A9"


def test_preview_never_answers_a_500(api: Any, server: LocalServer, monkeypatch: Any) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("an HTTP client that chokes")

    monkeypatch.setattr(capture_service.outbound, "fetch", broken)
    response = api.get("/api/bookmarks/preview/", {"url": server.url + "/page"})
    body = assert_error(response, 400, "validation_error")
    assert body["fields"]["url"] == ["the preview failed on an unexpected error (TypeError)"]
    assert "fill its title yourself" in body["message"]
    assert not Bookmark.objects.exists()


def test_preview_honours_capture_off(api: Any, server: LocalServer, settings: Any) -> None:
    settings.TIDDLY_CAPTURE = False
    response = api.get("/api/bookmarks/preview/", {"url": server.url + "/page"})
    body = assert_error(response, 400, "validation_error")
    assert "TIDDLY_CAPTURE=0" in body["message"]
    assert server.seen == []  # nothing was fetched


def test_preview_has_its_own_throttle(api: Any, server: LocalServer, settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_CLASSES": [
            "tiddly.throttling.ReadThrottle",
            "tiddly.throttling.WriteThrottle",
        ],
        "DEFAULT_THROTTLE_RATES": {"read": "100/min", "write": "100/min", "preview": "2/min"},
    }
    for _ in range(2):
        assert api.get("/api/bookmarks/preview/", {"url": server.url + "/page"}).status_code == 200
    response = api.get("/api/bookmarks/preview/", {"url": server.url + "/page"})
    assert_error(response, 429, "throttled")
    assert len(server.seen) == 2
    assert api.get("/api/bookmarks/").status_code == 200  # other reads keep their budget


def test_a_capture_whose_workers_kept_dying_ends_failed(api: Any, settings: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone
    from django_tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    from tiddly.tasks import requeue_interrupted

    body = _create(api, "https://example.com/kills-its-worker")
    assert _capture(api, body["id"])["status"] == "pending"
    row = DBTaskResult.objects.get(task_path=capture_service.capture_page.module_path)
    stale = timezone.now() - timedelta(seconds=settings.TIDDLY_TASK_LEASE_SECONDS + 1)
    dead = ["w1", "w2", "w3"][: settings.TIDDLY_TASK_MAX_ATTEMPTS]
    DBTaskResult.objects.filter(pk=row.pk).update(
        status=TaskResultStatus.RUNNING, started_at=stale, worker_ids=dead
    )

    assert requeue_interrupted() == 0

    got = _capture(api, body["id"])
    assert got["status"] == "failed"  # not pending forever
    assert got["error"].startswith("capture failed on its worker stopping (Its worker died")
    assert f"POST /api/bookmarks/{body['id']}/capture/" in got["error"]
    assert DBTaskResult.objects.get(pk=row.pk).status == TaskResultStatus.FAILED
    bookmark = Bookmark.objects.get(pk=body["id"])
    assert bookmark.url == "https://example.com/kills-its-worker"
