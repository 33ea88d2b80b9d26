"""POST /api/import/: status, body and database state (SPEC §14)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from content.models import Bookmark, ItemVersion, Note, SavedFilter, Tag
from content.tests.factories import BookmarkFactory, PromptFactory
from content.tests.portability_support import fixture, scoped_client, upload
from prompts.models import Prompt

pytestmark = pytest.mark.django_db


def _tags(item: Any) -> list[str]:
    return sorted(item.tags.values_list("name", flat=True))


def test_chrome_import_creates_bookmarks_with_folder_tags_and_reports_skips(
    api: Any, owner: Any
) -> None:
    response = upload(api, fixture("chrome.html"))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["created"] == {"bookmark": 3, "note": 0, "prompt": 0}
    assert body["updated"] == {"bookmark": 0, "note": 0, "prompt": 0}
    assert [(s["index"], s["url"]) for s in body["skipped"]] == [
        (3, 'javascript:alert("hi")'),
        (4, "https://www.python.org/"),
        (5, "chrome://settings/"),
    ]
    assert "Repeats the url of entry 0" in body["skipped"][1]["reason"]
    assert body["skipped"][0]["title"] == "Bookmarklet"
    assert body["errors"] == []
    cafe = Bookmark.objects.get(owner=owner, url="https://example.com/caf%C3%A9?a=1&b=2")
    assert cafe.title == "Crème brûlée — 日本語のタイトル"
    assert _tags(cafe) == ["cafe", "dev-tools"]
    assert cafe.created_at == datetime.fromtimestamp(1700000007, tz=UTC)
    assert cafe.last_used_at == cafe.created_at
    python = Bookmark.objects.get(owner=owner, url="https://www.python.org/")
    assert python.title == "Welcome to Python.org"
    assert _tags(python) == []


def test_every_created_item_records_version_one_with_source_import(api: Any, owner: Any) -> None:
    upload(api, fixture("firefox.html"))
    bookmarks = list(Bookmark.objects.filter(owner=owner))
    assert len(bookmarks) == 5
    versions = ItemVersion.objects.filter(owner=owner)
    assert versions.count() == 5
    mdn = Bookmark.objects.get(url="https://developer.mozilla.org/en-US/docs/Web/HTML")
    row = versions.get(item_id=mdn.pk)
    assert (row.version, row.action, row.source) == (1, "create", "import")
    assert row.token_prefix
    assert api.token.startswith(row.token_prefix)
    assert row.metadata["tags"] == ["html", "reference", "web-dev"]
    assert row.metadata["url"] == mdn.url
    assert mdn.description == "The <html> reference & guides"
    assert mdn.updated_at == datetime.fromtimestamp(1690000020, tz=UTC)


@pytest.mark.parametrize(
    ("name", "created", "skipped"),
    [
        ("safari.html", 3, [3]),
        ("edge.html", 3, [2, 3]),
        ("pocket.html", 3, [3]),
        ("linkding.html", 3, [3]),
        ("karakeep.html", 2, [2, 3]),
    ],
)
def test_each_source_imports(
    api: Any, owner: Any, name: str, created: int, skipped: list[int]
) -> None:
    body = upload(api, fixture(name)).json()
    assert body["created"]["bookmark"] == created
    assert [s["index"] for s in body["skipped"]] == skipped
    assert Bookmark.objects.filter(owner=owner).count() == created


def test_pocket_read_archive_and_linkding_archived_bookmarks_are_archived(
    api: Any, owner: Any
) -> None:
    upload(api, fixture("pocket.html"))
    upload(api, fixture("linkding.html"))
    done = Bookmark.objects.get(owner=owner, url="https://example.com/done")
    old = Bookmark.objects.get(owner=owner, url="https://example.net/old")
    assert done.is_archived
    assert old.is_archived
    assert _tags(old) == ["archive-me"]
    linkding = Bookmark.objects.get(owner=owner, url="https://github.com/sissbruecker/linkding")
    assert linkding.content == "Try the **Docker** image"
    japanese = Bookmark.objects.get(owner=owner, url__startswith="https://www.jp.example/")
    assert _tags(japanese) == ["reading-list"]


def test_unusable_folder_names_are_reported_as_warnings(api: Any) -> None:
    body = upload(api, fixture("linkding.html")).json()
    assert body["errors"] == [
        "The folder or tag '日本語' has no letters or digits usable in a tag (a-z, 0-9); its "
        "bookmarks were imported without it."
    ]


def test_a_truncated_file_is_invalid_import_with_the_position_and_saves_nothing(
    api: Any, owner: Any
) -> None:
    whole = fixture("firefox.html")
    cut = whole[: whole.index(b"Unfiled page")]
    response = upload(api, cut)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_import"
    assert body["position"] == {"line": cut.count(b"\n") + 1, "column": body["position"]["column"]}
    assert "truncated" in body["message"]
    assert "Nothing was imported" in body["message"]
    assert Bookmark.objects.count() == 0
    assert Tag.objects.count() == 0
    assert ItemVersion.objects.count() == 0


@pytest.mark.parametrize(
    "data",
    [b"\x89PNG\r\n\x1a\n\x00\x00binary", b"just some text", b"<p>a web page</p>", b"   "],
)
def test_files_that_are_not_bookmark_exports_are_invalid_import(api: Any, data: bytes) -> None:
    response = upload(api, data)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_import"


def test_a_file_over_the_size_limit_is_field_limit_exceeded(
    api: Any, settings: Any, owner: Any
) -> None:
    settings.TIDDLY_IMPORT_MAX_BYTES = 500
    response = upload(api, fixture("firefox.html"))
    assert response.status_code == 400
    body = response.json()
    assert (body["error"], body["field"], body["limit"]) == ("field_limit_exceeded", "file", 500)
    assert Bookmark.objects.count() == 0


def test_on_conflict_skip_keeps_the_existing_bookmark(api: Any, owner: Any) -> None:
    existing = BookmarkFactory(owner=owner, url="https://www.python.org/", title="Mine")
    body = upload(api, fixture("chrome.html")).json()
    assert body["created"]["bookmark"] == 2
    assert body["skipped"][0]["index"] == 0
    assert f"already exists (id {existing.pk})" in body["skipped"][0]["reason"]
    existing.refresh_from_db()
    assert existing.title == "Mine"


def test_on_conflict_update_overwrites_from_the_file_with_a_version(api: Any, owner: Any) -> None:
    existing = BookmarkFactory(owner=owner, url="https://www.python.org/", title="Mine")
    body = upload(api, fixture("chrome.html"), on_conflict="update").json()
    assert body["created"]["bookmark"] == 2
    assert body["updated"]["bookmark"] == 1
    existing.refresh_from_db()
    assert existing.title == "Welcome to Python.org"
    row = ItemVersion.objects.get(item_id=existing.pk)
    assert (row.source, row.changed_fields) == ("import", ["title"])


def test_a_trashed_bookmark_does_not_block_the_same_url(api: Any, owner: Any) -> None:
    BookmarkFactory(owner=owner, url="https://www.python.org/", deleted_at=datetime.now(UTC))
    body = upload(api, fixture("chrome.html")).json()
    assert body["created"]["bookmark"] == 3


def test_import_never_touches_a_strangers_items(api: Any, other: Any, owner: Any) -> None:
    theirs = BookmarkFactory(owner=other, url="https://www.python.org/", title="Theirs")
    body = upload(api, fixture("chrome.html"), on_conflict="update").json()
    assert body["created"]["bookmark"] == 3
    assert body["updated"]["bookmark"] == 0
    theirs.refresh_from_db()
    assert theirs.title == "Theirs"
    assert _tags(theirs) == []
    assert Tag.objects.filter(owner=other).count() == 0


def test_anonymous_import_is_401(anon: Any) -> None:
    response = upload(anon, fixture("chrome.html"))
    assert response.status_code == 401
    assert response.json()["error"] == "not_authenticated"


def _tiddly(items: list[dict[str, Any]], **extra: Any) -> bytes:
    document = {"format": "tiddly", "version": 1, "items": items, **extra}
    return json.dumps(document).encode()


def test_json_entries_with_problems_are_skipped_with_their_reason(api: Any, owner: Any) -> None:
    items = [
        {"type": "note", "title": "Fine", "content": "ok", "tags": ["a"]},
        {"type": "note", "title": "", "content": "no title"},
        {"type": "prompt", "name": "bad", "content": "Hi {{ who }}", "arguments": []},
        {"type": "widget"},
        "not an object",
        {"type": "note", "title": "Bad date", "created_at": "yesterday"},
        {"type": "bookmark", "url": "ftp://example.com/file"},
        {"type": "note", "title": "Bad tag", "tags": ["Not A Slug!"]},
        {"type": "prompt", "name": "ok", "content": "Hi {{ who }}", "arguments": [{"name": "who"}]},
        {"type": "prompt", "name": "ok", "content": "Hello", "arguments": []},
    ]
    response = upload(api, _tiddly(items, filters=[{"id": "x"}]), name="export.json")
    assert response.status_code == 200
    body = response.json()
    assert body["created"] == {"bookmark": 0, "note": 1, "prompt": 1, "filter": 0}
    reasons = {s["index"]: s["reason"] for s in body["skipped"]}
    assert sorted(reasons) == [1, 2, 3, 4, 5, 6, 7, 9]
    assert "title is required" in reasons[1]
    assert "undefined variable" in reasons[2]
    assert "Unknown type" in reasons[3]
    assert "ISO 8601" in reasons[5]
    assert "http" in reasons[6]
    assert "Invalid tag" in reasons[7]
    assert "Repeats the name of entry 8" in reasons[9]
    # The filter entry has no name or types: reported, and the items still import.
    (error,) = body["errors"]
    assert error.startswith("Filter 0 (None) was not imported: ")
    assert not SavedFilter.objects.filter(owner=owner).exists()
    assert Note.objects.get(owner=owner).title == "Fine"
    assert Prompt.objects.get(owner=owner).arguments == [
        {"name": "who", "description": None, "required": False}
    ]


@pytest.mark.parametrize(
    ("document", "position"),
    [
        (b'{"format": "tiddly",\n "version": 1, "items": [}', {"line": 2, "column": 26}),
        (b"[1, 2]", {"path": "$"}),
        (b'{"format": "other", "version": 1, "items": []}', {"path": "$.format"}),
        (b'{"format": "tiddly", "version": 2, "items": []}', {"path": "$.version"}),
        (b'{"format": "tiddly", "version": 1, "items": {}}', {"path": "$.items"}),
    ],
)
def test_structural_json_problems_are_invalid_import_with_a_position(
    api: Any, owner: Any, document: bytes, position: dict[str, Any]
) -> None:
    response = upload(api, document, name="export.json")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_import"
    assert response.json()["position"] == position


def test_an_existing_prompt_name_is_skipped_or_updated(api: Any, owner: Any) -> None:
    prompt = PromptFactory(owner=owner, name="greet", content="Hello {{ who }}!")
    item = {
        "type": "prompt",
        "name": "greet",
        "title": "Greeting",
        "content": "Hi {{ who }}",
        "arguments": [{"name": "who", "description": "Whom", "required": True}],
    }
    body = upload(api, _tiddly([item]), name="x.json").json()
    assert "already exists" in body["skipped"][0]["reason"]
    body = upload(api, _tiddly([item]), name="x.json", on_conflict="update").json()
    assert body["updated"]["prompt"] == 1
    prompt.refresh_from_db()
    assert (prompt.title, prompt.content) == ("Greeting", "Hi {{ who }}")


def test_the_schema_documents_the_multipart_upload_and_the_file_downloads() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    upload_body = schema["paths"]["/api/import/"]["post"]["requestBody"]["content"]
    assert list(upload_body) == ["multipart/form-data"]
    downloads = schema["paths"]["/api/export/"]["get"]["responses"]["200"]["content"]
    assert set(downloads) == {"application/json", "text/html", "application/zip"}


# --- scopes (SPEC §8.1) -------------------------------------------------------------------------


def test_a_content_writer_imports_browser_bookmarks(owner: Any) -> None:
    response = upload(scoped_client(owner, "content:write"), fixture("chrome.html"))
    assert response.status_code == 200
    assert response.json()["created"]["bookmark"] == 3


def test_a_file_with_a_prompt_needs_prompts_write_and_then_saves_nothing(owner: Any) -> None:
    items = [
        {"type": "note", "title": "First", "content": "saved only with every scope"},
        {"type": "prompt", "name": "greet", "content": "Hi"},
    ]
    response = upload(scoped_client(owner, "content:write"), _tiddly(items), name="x.json")
    assert response.status_code == 403
    body = response.json()
    assert body["error"] == "forbidden"
    assert "'prompts:write'" in body["message"]
    assert Note.objects.count() == 0
    assert Prompt.objects.count() == 0
    assert ItemVersion.objects.count() == 0


def test_a_prompts_writer_imports_prompts_but_not_bookmarks(owner: Any) -> None:
    writer = scoped_client(owner, "prompts:write")
    prompt = {"type": "prompt", "name": "greet", "content": "Hi"}
    assert upload(writer, _tiddly([prompt]), name="x.json").json()["created"]["prompt"] == 1
    response = upload(writer, fixture("chrome.html"))
    assert response.status_code == 403
    assert "'content:write'" in response.json()["message"]
    assert Bookmark.objects.count() == 0


def test_a_read_only_token_cannot_import(owner: Any) -> None:
    reader = scoped_client(owner, "content:read", "prompts:read")
    response = upload(reader, fixture("chrome.html"))
    assert response.status_code == 403
    assert "the 'content:write' or 'prompts:write' scope" in response.json()["message"]
    assert Bookmark.objects.count() == 0


@pytest.mark.parametrize(("threshold", "refreshes"), [(5, 1), (6, 0)])
def test_a_large_import_refreshes_the_planner_statistics(
    api: Any, monkeypatch: Any, threshold: int, refreshes: int
) -> None:
    from content.portability import importer

    calls: list[bool] = []
    monkeypatch.setattr(importer, "STATISTICS_AFTER", threshold)
    monkeypatch.setattr(importer, "refresh_statistics", lambda: calls.append(True))
    upload(api, fixture("firefox.html"))  # creates 5 bookmarks
    assert Bookmark.objects.count() == 5
    assert len(calls) == refreshes
