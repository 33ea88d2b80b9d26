"""GET /api/export/: JSON round trip, Netscape and Markdown downloads (SPEC §14)."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

from content import services
from content.history import Actor
from content.models import Bookmark, Note, Relationship, SavedFilter
from content.portability.netscape import NetscapeEntry, parse_netscape
from content.services import create_item, relationships
from content.services.relationships import End
from content.tests.factories import BookmarkFactory, NoteFactory, PromptFactory
from content.tests.portability_support import download, scoped_client, upload
from prompts.models import Prompt

pytestmark = pytest.mark.django_db

PAST = datetime(2021, 3, 4, 5, 6, 7, tzinfo=UTC)
ITEM_FIELDS = (
    "title",
    "description",
    "content",
    "created_at",
    "updated_at",
    "last_used_at",
    "archived_at",
    "deleted_at",
)


def _account(owner: Any) -> None:
    now = datetime.now(UTC)
    BookmarkFactory(
        owner=owner, url="https://example.com/a", title="A & <b>", description="d", tags=["x"]
    )
    BookmarkFactory(owner=owner, url="https://example.com/old", archived_at=PAST, now=PAST)
    BookmarkFactory(
        owner=owner, url="https://example.com/later", archived_at=now + timedelta(days=7)
    )
    NoteFactory(owner=owner, title="Café notes", content="# Über\n\nline 2", tags=["x", "y"])
    NoteFactory(owner=owner, title="Trashed", deleted_at=now)
    PromptFactory(owner=owner, name="greet", title="Greeting", description="Say hi")


def test_json_export_is_a_versioned_document_of_every_item_but_the_trash(
    api: Any, owner: Any, other: Any
) -> None:
    _account(owner)
    BookmarkFactory(owner=other, url="https://example.com/theirs")
    response = download(api)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith('attachment; filename="tiddly-export-')
    document = json.loads(response.body)
    assert (document["format"], document["version"]) == ("tiddly", 1)
    assert document["filters"] == []
    assert document["relationships"] == []
    kinds = sorted((i["type"], i.get("url") or i["title"]) for i in document["items"])
    assert kinds == [
        ("bookmark", "https://example.com/a"),
        ("bookmark", "https://example.com/later"),
        ("bookmark", "https://example.com/old"),
        ("note", "Café notes"),
        ("prompt", "Greeting"),
    ]
    prompt = next(i for i in document["items"] if i["type"] == "prompt")
    assert prompt["name"] == "greet"
    assert prompt["arguments"] == [
        {"name": "who", "description": "Whom to greet", "required": True}
    ]


def test_json_round_trip_into_an_empty_account_reproduces_every_item(
    api: Any, owner: Any, other_api: Any, other: Any
) -> None:
    _account(owner)
    exported = download(api, view=["active", "archived", "deleted"]).body
    response = upload(other_api, exported, name="export.json")
    assert response.status_code == 200, response.json()
    assert response.json()["created"] == {"bookmark": 3, "note": 2, "prompt": 1}
    assert response.json()["skipped"] == []
    for model in (Bookmark, Note, Prompt):
        mine = _snapshot(model, owner)
        theirs = _snapshot(model, other)
        assert mine == theirs
    later = Bookmark.objects.get(owner=other, url="https://example.com/later")
    assert later.archived_at > datetime.now(UTC)  # still a scheduled archive
    assert not later.is_archived


def _snapshot(model: Any, owner: Any) -> list[tuple[Any, ...]]:
    rows = []
    for item in model.objects.filter(owner=owner).order_by("created_at", "title"):
        extra = (item.url,) if model is Bookmark else ()
        if model is Prompt:
            extra = (item.name, item.arguments)
        values = tuple(getattr(item, f) for f in ITEM_FIELDS)
        rows.append((*values, item.tag_names(), *extra))
    return rows


def test_netscape_export_holds_bookmarks_and_parses_back(api: Any, owner: Any) -> None:
    _account(owner)
    response = download(api, format="netscape")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    entries, _ = parse_netscape(response.body)
    urls = sorted(e.url for e in entries if isinstance(e, NetscapeEntry))
    assert urls == ["https://example.com/a", "https://example.com/later", "https://example.com/old"]
    first = next(e for e in entries if e.url == "https://example.com/a")
    assert isinstance(first, NetscapeEntry)
    assert (first.title, first.description, first.tags) == ("A & <b>", "d", ["x"])


def test_netscape_export_of_notes_only_is_a_400(api: Any) -> None:
    response = download(api, format="netscape", type="note")
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert "bookmark" in response.json()["fields"]["type"][0]


def test_markdown_export_is_a_zip_of_notes_and_prompts_with_yaml_front_matter(
    api: Any, owner: Any
) -> None:
    _account(owner)
    NoteFactory(owner=owner, title="Café notes", content="second with the same title")
    response = download(api, format="markdown")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.body))
    assert archive.testzip() is None
    assert sorted(archive.namelist()) == [
        "notes/cafe-notes-2.md",
        "notes/cafe-notes.md",
        "prompts/greet.md",
    ]
    text = archive.read("notes/cafe-notes.md").decode()
    _, header, body = text.split("---\n", 2)
    meta = yaml.safe_load(header)
    assert meta["title"] == "Café notes"
    assert meta["tags"] == ["x", "y"]
    assert meta["type"] == "note"
    assert body == "\n# Über\n\nline 2"
    prompt = yaml.safe_load(archive.read("prompts/greet.md").decode().split("---\n")[1])
    assert prompt["name"] == "greet"
    assert prompt["arguments"] == [
        {"name": "who", "description": "Whom to greet", "required": True}
    ]


def test_export_never_contains_a_strangers_items(api: Any, owner: Any, other: Any) -> None:
    _account(other)
    NoteFactory(owner=owner, title="Mine", content="mine")  # a markdown export is never empty
    for format in ("json", "netscape", "markdown"):
        body = download(api, format=format).body
        assert b"example.com" not in body
        assert b"greet" not in body
    assert [i["title"] for i in json.loads(download(api).body)["items"]] == ["Mine"]


def test_export_filters_by_type_and_view(api: Any, owner: Any) -> None:
    _account(owner)
    document = json.loads(download(api, type="bookmark", view="archived").body)
    assert [i["url"] for i in document["items"]] == ["https://example.com/old"]
    trashed = json.loads(download(api, view="deleted").body)
    assert [i["title"] for i in trashed["items"]] == ["Trashed"]


def test_anonymous_export_is_401(anon: Any) -> None:
    response = download(anon)
    assert response.status_code == 401
    assert response.json()["error"] == "not_authenticated"


def test_an_unknown_format_is_a_400(api: Any) -> None:
    response = download(api, format="csv")
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"


def test_under_asgi_the_export_streams_through_an_async_iterator(
    api: Any, owner: Any, async_client: Any
) -> None:
    from asgiref.sync import async_to_sync
    from django.urls import reverse

    _account(owner)

    async def fetch() -> tuple[Any, bytes]:
        headers = {"Authorization": f"Bearer {api.token}"}
        response = await async_client.get(reverse("export"), headers=headers)
        assert response.is_async
        return response, b"".join([chunk async for chunk in response.streaming_content])

    response, body = async_to_sync(fetch)()
    assert response.status_code == 200
    assert len(json.loads(body)["items"]) == 5


# --- scopes (SPEC §8.1) -------------------------------------------------------------------------


def test_a_content_reader_exports_bookmarks_and_notes_but_not_prompts(owner: Any) -> None:
    _account(owner)
    reader = scoped_client(owner, "content:read")
    response = download(reader)
    assert response.status_code == 200
    kinds = {i["type"] for i in json.loads(response.body)["items"]}
    assert kinds == {"bookmark", "note"}
    markdown = zipfile.ZipFile(io.BytesIO(download(reader, format="markdown").body))
    assert markdown.namelist() == ["notes/cafe-notes.md"]


def test_asking_for_prompts_without_prompts_read_is_403(owner: Any) -> None:
    _account(owner)
    response = download(scoped_client(owner, "content:read"), type="prompt")
    assert response.status_code == 403
    body = response.json()
    assert body["error"] == "forbidden"
    assert "'prompts:read'" in body["message"]


def test_a_prompts_reader_cannot_export_bookmarks_as_netscape(owner: Any) -> None:
    _account(owner)
    reader = scoped_client(owner, "prompts:read")
    response = download(reader, format="netscape")
    assert response.status_code == 403
    assert "'content:read'" in response.json()["message"]
    document = json.loads(download(reader).body)
    assert [i["type"] for i in document["items"]] == ["prompt"]


def test_a_write_only_token_cannot_export(owner: Any) -> None:
    response = download(scoped_client(owner, "content:write", "prompts:write"))
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"


def test_json_round_trip_carries_saved_filters_and_relationships(
    api: Any, other_api: Any, owner: Any, other: Any
) -> None:
    note = create_item(
        owner=owner, model=Note, data={"title": "n", "tags": ["work"]}, actor=Actor()
    )
    mark = create_item(
        owner=owner, model=Bookmark, data={"url": "https://e.com/", "tags": ["work"]}, actor=Actor()
    )
    services.create_filter(
        owner=owner,
        data={
            "name": "Work",
            "content_types": ["note", "bookmark"],
            "expression": {"groups": [{"tags": ["work"]}]},
        },
    )
    relationships.create_link(
        owner=owner,
        source=End("note", note.pk),
        target=End("bookmark", mark.pk),
        description="about it",
        actor=Actor(),
    )
    exported = download(api, format="json").body
    document = json.loads(exported)
    assert [f["name"] for f in document["filters"]] == ["Work"]
    assert len(document["relationships"]) == 1

    response = upload(other_api, exported, name="export.json")

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["created"]["filter"], body["created"]["relationship"]) == (1, 1)
    assert body["errors"] == []
    imported = SavedFilter.objects.get(owner=other)
    assert (imported.name, imported.groups) == ("Work", [["work"]])
    link = Relationship.objects.get(owner=other)
    ends = {link.source_type, link.target_type}
    assert ends == {"note", "bookmark"}
    assert link.description == "about it"
    assert Note.objects.get(owner=other).pk in (link.source_id, link.target_id)
