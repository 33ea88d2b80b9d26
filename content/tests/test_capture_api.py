"""Page capture over REST (SPEC §15) against real local servers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from content.models import Bookmark, CaptureStatus, PageCapture
from content.services.capture import capture_page
from tiddly.tests.outbound_servers import LocalServer, allowed_server

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(settings: Any) -> Iterator[LocalServer]:
    with allowed_server(settings, timeout=1) as srv:
        yield srv


@pytest.fixture
def run_captures(run_tasks: Any) -> Any:
    """Run the queued captures through the real queue, retries' backoff included."""

    def run() -> int:
        ran = int(run_tasks(due_within=15))
        assert not PageCapture.objects.filter(status=CaptureStatus.PENDING).exists()
        return ran

    return run


def create(api: Any, url: str, **extra: Any) -> Any:
    return api.post("/api/bookmarks/", {"url": url, **extra}, format="json")


def test_create_queues_a_capture_and_the_task_fills_the_bookmark(
    run_captures: Any, api: Any, server: LocalServer
) -> None:
    response = create(api, server.url + "/page")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["capture"]["status"] == "pending"
    assert body["capture"]["attempts"] == 0
    assert server.seen == []  # nothing fetched inside the request
    run_captures()
    bookmark = Bookmark.objects.get(pk=body["id"])
    assert bookmark.title == "OG title"
    assert bookmark.description == "Meta description"
    assert "# Heading" in bookmark.content
    assert "[a link](https://example.org/x)" in bookmark.content
    assert "Home | About" not in bookmark.content
    got = api.get(f"/api/bookmarks/{body['id']}/").json()
    assert got["capture"]["status"] == "done"
    assert got["capture"]["http_status"] == 200
    assert got["capture"]["content_type"] == "text/html"
    assert got["capture"]["final_url"] == server.url + "/page"
    assert got["capture"]["error"] is None
    assert got["capture"]["finished_at"] is not None
    history = api.get(f"/api/bookmarks/{body['id']}/history/").json()
    sources = [v["source"] for v in history["results"]]
    assert "capture" in sources
    listed = api.get("/api/bookmarks/").json()["results"][0]
    assert listed["capture"]["status"] == "done"


def test_given_title_is_kept(run_captures: Any, api: Any, server: LocalServer) -> None:
    body = create(api, server.url + "/page", title="Mine").json()
    run_captures()
    bookmark = Bookmark.objects.get(pk=body["id"])
    assert bookmark.title == "Mine"
    assert bookmark.description == "Meta description"


def test_capture_false_and_content_mean_no_capture(api: Any, server: LocalServer) -> None:
    off = create(api, server.url + "/page", capture=False).json()
    with_content = create(api, server.url + "/plain", content="my notes").json()
    assert off["capture"] is None
    assert with_content["capture"] is None
    assert not PageCapture.objects.exists()
    assert api.get(f"/api/bookmarks/{off['id']}/").json()["capture"] is None


def test_capture_must_be_a_json_boolean(api: Any) -> None:
    response = create(api, "https://example.org/", capture="no")
    assert response.status_code == 400
    assert "capture" in response.json()["fields"]
    assert not Bookmark.objects.exists()


def test_capture_off_by_setting(api: Any, server: LocalServer, settings: Any) -> None:
    settings.TIDDLY_CAPTURE = False
    body = create(api, server.url + "/page").json()
    assert body["capture"] is None
    response = api.post(f"/api/bookmarks/{body['id']}/capture/", {}, format="json")
    assert response.status_code == 400
    assert "TIDDLY_CAPTURE" in response.json()["message"]
    assert not PageCapture.objects.exists()


def test_page_html_is_extracted_at_once_without_fetching(api: Any, settings: Any) -> None:
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = []
    html = (
        "<html><head><title>Intranet page</title></head><body><article><h2>Secret plan</h2>"
        "<p>The body of the intranet page, kept because the browser sent it to us.</p>"
        "<p>Another paragraph of real text, so the extractor keeps it.</p></article></body></html>"
    )
    response = create(api, "http://10.0.0.5/wiki/plan", page_html=html)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["capture"]["status"] == "done"
    assert body["capture"]["final_url"] == "http://10.0.0.5/wiki/plan"
    assert body["title"] == "Intranet page"
    assert "Secret plan" in body["content"]
    assert Bookmark.objects.get(pk=body["id"]).title == "Intranet page"


def test_page_html_over_the_limit_is_refused(api: Any) -> None:
    response = create(api, "https://example.org/", page_html="a" * 5_000_001)
    assert response.status_code == 400
    assert response.json()["error"] == "field_limit_exceeded"
    assert response.json()["field"] == "page_html"
    assert not Bookmark.objects.exists()


def test_page_html_with_nul_bytes_is_refused(api: Any) -> None:
    response = create(api, "https://example.org/", page_html="<p>a\x00b</p>")
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert not Bookmark.objects.exists()


@pytest.mark.parametrize(
    ("path", "status", "error", "attempts"),
    [
        ("/status/404", "failed", "HTTP 404", 1),
        ("/status/429", "failed", "HTTP 429", 3),
        ("/image", "skipped", "unsupported content type image/png", 1),
        ("/fake-pdf", "failed", "not a readable PDF", 1),
        ("/bomb", "failed", "too large", 1),
        ("/big", "failed", "too large", 1),
        ("/hop/7", "failed", "too many redirects", 1),
        ("/to-private", "failed", "refused: 10.0.0.5 is a private address", 1),
        ("/to-metadata", "failed", "refused: 169.254.169.254 is a link-local address", 1),
        ("/trickle", "failed", "timed out after 1 s", 3),
        ("/empty-html", "failed", "the page is empty", 1),
    ],
)
def test_hostile_pages_end_with_an_instructional_error(
    run_captures: Any,
    api: Any,
    server: LocalServer,
    path: str,
    status: str,
    error: str,
    attempts: int,
) -> None:
    body = create(api, server.url + path).json()
    run_captures()
    capture = api.get(f"/api/bookmarks/{body['id']}/").json()["capture"]
    assert capture["status"] == status
    assert capture["error"].startswith(error), capture["error"]
    assert capture["attempts"] == attempts
    assert Bookmark.objects.filter(pk=body["id"], content__isnull=True).exists()


def test_private_url_is_refused_without_connecting(
    run_captures: Any, api: Any, settings: Any
) -> None:
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = []
    body = create(api, "http://127.0.0.1:9/admin").json()
    run_captures()
    capture = PageCapture.objects.get(pk=body["id"])
    assert capture.status == "failed"
    assert capture.error.startswith("refused: 127.0.0.1 is a loopback address")


def test_503_that_recovers_is_retried(run_captures: Any, api: Any, server: LocalServer) -> None:
    body = create(api, server.url + "/flaky").json()
    run_captures()
    capture = PageCapture.objects.get(pk=body["id"])
    assert capture.status == "done"
    assert capture.attempts == 2
    assert server.counters["flaky"] == 2
    assert "# Heading" in Bookmark.objects.get(pk=body["id"]).content


def test_broken_html_and_plain_text(run_captures: Any, api: Any, server: LocalServer) -> None:
    broken = create(api, server.url + "/broken-html").json()
    plain = create(api, server.url + "/plain").json()
    markdown = create(api, server.url + "/markdown").json()
    run_captures()
    assert PageCapture.objects.get(pk=broken["id"]).status in ("done", "failed")
    assert Bookmark.objects.get(pk=plain["id"]).content == "just text\nline 2"
    assert Bookmark.objects.get(pk=markdown["id"]).content == "# Title\n\nSome *markdown*."


def test_a_field_edited_after_the_request_is_not_overwritten(
    run_captures: Any, api: Any, server: LocalServer
) -> None:
    body = create(api, server.url + "/page").json()
    edited = api.patch(
        f"/api/bookmarks/{body['id']}/", {"description": "typed by me"}, format="json"
    )
    assert edited.status_code == 200
    run_captures()
    bookmark = Bookmark.objects.get(pk=body["id"])
    assert bookmark.description == "typed by me"
    assert bookmark.title == "OG title"  # still blank when the capture wrote: filled
    assert PageCapture.objects.get(pk=body["id"]).status == "done"


def test_capture_again_replaces_content_only_when_asked(
    run_captures: Any, api: Any, server: LocalServer
) -> None:
    body = create(api, server.url + "/page", content="old notes").json()
    url = f"/api/bookmarks/{body['id']}/capture/"
    response = api.post(url, {}, format="json")
    assert response.status_code == 202
    assert response.json()["capture"]["status"] == "pending"
    run_captures()
    assert Bookmark.objects.get(pk=body["id"]).content == "old notes"
    assert PageCapture.objects.get(pk=body["id"]).status == "done"

    response = api.post(url, {"replace_content": True}, format="json")
    assert response.status_code == 202
    run_captures()
    assert "# Heading" in Bookmark.objects.get(pk=body["id"]).content


def test_capture_again_supersedes_an_older_request(api: Any, server: LocalServer) -> None:
    body = create(api, server.url + "/page").json()
    old_token = str(PageCapture.objects.get(pk=body["id"]).token)
    api.post(f"/api/bookmarks/{body['id']}/capture/", {}, format="json")
    capture_page.func(body["id"], old_token)  # the stale task does nothing
    assert server.seen == []
    assert PageCapture.objects.get(pk=body["id"]).status == "pending"


def test_capture_again_bad_input_stranger_and_anonymous(
    api: Any, other_api: Any, anon: Any, server: LocalServer
) -> None:
    body = create(api, server.url + "/page", capture=False).json()
    url = f"/api/bookmarks/{body['id']}/capture/"
    assert api.post(url, {"replace_content": "yes"}, format="json").status_code == 400
    assert api.post(url, {"unknown": 1}, format="json").status_code == 400
    assert other_api.post(url, {}, format="json").status_code == 404
    assert anon.post(url, {}, format="json").status_code == 401
    assert api.post("/api/bookmarks/not-an-id/capture/", {}, format="json").status_code == 404
    assert not PageCapture.objects.exists()


def test_preview(api: Any, anon: Any, server: LocalServer) -> None:
    response = api.get("/api/bookmarks/preview/", {"url": server.url + "/hop/1"})
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "url": server.url + "/hop/1",
        "final_url": server.url + "/hop/0",
        "title": "end",
        "description": None,
        "content_type": "text/html",
    }
    assert not Bookmark.objects.exists()
    assert anon.get("/api/bookmarks/preview/", {"url": server.url + "/page"}).status_code == 401


@pytest.mark.parametrize(
    ("path", "reason"),
    [("/to-private", "refused: 10.0.0.5"), ("/status/404", "HTTP 404"), ("/trickle", "timed out")],
)
def test_preview_failures_are_validation_errors(
    api: Any, server: LocalServer, path: str, reason: str
) -> None:
    response = api.get("/api/bookmarks/preview/", {"url": server.url + path})
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert response.json()["fields"]["url"][0].startswith(reason)


def test_preview_needs_a_url(api: Any) -> None:
    response = api.get("/api/bookmarks/preview/")
    assert response.status_code == 400
    assert "url" in response.json()["fields"]
