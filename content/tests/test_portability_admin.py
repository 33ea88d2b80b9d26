"""The admin's Import page and "Export selected" actions (SPEC §9, §14): status, body, database."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from content.models import Bookmark, ItemVersion, Note, Tag
from content.portability.netscape import NetscapeEntry, parse_netscape
from content.tests.factories import BookmarkFactory, NoteFactory, PromptFactory
from content.tests.portability_support import fixture
from content.tests.test_admin import changelist_url, texts
from prompts.models import Prompt

pytestmark = pytest.mark.django_db


def import_url(model: type = Bookmark) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_import")


def post_import(client: Client, data: bytes, name: str = "bookmarks.html", **fields: str) -> Any:
    body = {"file": SimpleUploadedFile(name, data), "on_conflict": "skip", **fields}
    return client.post(import_url(), body)


def export(client: Client, model: type, action: str, items: list[Any]) -> Any:
    body = {"action": action, "_selected_action": [str(i.pk) for i in items]}
    return client.post(changelist_url(model), body)


def body_of(response: Any) -> bytes:
    return b"".join(response.streaming_content)


def action_names(client: Client, model: type) -> list[str]:
    form = client.get(changelist_url(model)).context["action_form"]
    return [name for name, _ in form.fields["action"].choices if name]


# --- import -------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [Bookmark, Note, Prompt])
def test_every_item_list_links_to_the_import_page(staff_client: Client, model: type) -> None:
    response = staff_client.get(changelist_url(model))
    assert response.status_code == 200
    assert f'href="{import_url(model)}"' in response.content.decode()


def test_the_import_page_shows_the_upload_form(staff_client: Client) -> None:
    response = staff_client.get(import_url())
    assert response.status_code == 200
    page = response.content.decode()
    assert 'enctype="multipart/form-data"' in page
    assert 'name="on_conflict"' in page
    assert "Files up to 50 MB" in page


def test_importing_a_browser_file_creates_bookmarks_and_shows_the_report(
    staff_client: Client, staff: Any, other: Any
) -> None:
    response = post_import(staff_client, fixture("chrome.html"))
    assert response.status_code == 200
    report = response.context["report"]
    assert report["created"] == {"bookmark": 3, "note": 0, "prompt": 0}
    assert [s["index"] for s in report["skipped"]] == [3, 4, 5]
    page = response.content.decode()
    assert "Import report" in page
    assert "Skipped: 3" in page
    assert "Repeats the url of entry 0" in page
    assert Bookmark.objects.filter(owner=staff).count() == 3
    assert not Bookmark.objects.filter(owner=other).exists()
    sources = set(ItemVersion.objects.filter(owner=staff).values_list("source", flat=True))
    assert sources == {"import"}


def test_update_on_conflict_from_the_admin_overwrites_through_the_update_service(
    staff_client: Client, staff: Any
) -> None:
    mine = BookmarkFactory(owner=staff, url="https://www.python.org/", title="Mine")
    response = post_import(staff_client, fixture("chrome.html"), on_conflict="update")
    assert response.context["report"]["updated"]["bookmark"] == 1
    mine.refresh_from_db()
    assert mine.title == "Welcome to Python.org"
    row = ItemVersion.objects.get(item_id=mine.pk)
    assert (row.action, row.source) == ("update", "import")


def test_a_malformed_file_shows_the_error_on_the_form_and_saves_nothing(
    staff_client: Client,
) -> None:
    whole = fixture("firefox.html")
    response = post_import(staff_client, whole[: whole.index(b"Unfiled page")])
    assert response.status_code == 200
    assert response.context["report"] is None
    [error] = response.context["form"].errors["file"]
    assert "truncated" in error
    assert "Nothing was imported" in response.content.decode()
    assert Bookmark.objects.count() == 0
    assert Tag.objects.count() == 0


def test_a_file_over_the_limit_is_refused_on_the_form(staff_client: Client, settings: Any) -> None:
    settings.TIDDLY_IMPORT_MAX_BYTES = 500
    response = post_import(staff_client, fixture("firefox.html"))
    assert "file" in response.context["form"].errors
    assert Bookmark.objects.count() == 0


def test_the_import_page_needs_a_staff_login(client: Client, owner: Any) -> None:
    response = client.get(import_url())
    assert response.status_code == 302
    assert "/login/" in response["Location"]
    client.force_login(owner)  # not staff
    response = client.post(import_url(), {"file": SimpleUploadedFile("b.html", b"<DL></DL>")})
    assert response.status_code == 302
    assert Bookmark.objects.count() == 0


# --- export -------------------------------------------------------------------------------------


def test_bookmark_lists_offer_json_and_netscape_and_note_lists_json_and_markdown(
    staff_client: Client,
) -> None:
    bookmark_actions = action_names(staff_client, Bookmark)
    assert "export_json" in bookmark_actions
    assert "export_netscape" in bookmark_actions
    assert "export_markdown" not in bookmark_actions
    for model in (Note, Prompt):
        names = action_names(staff_client, model)
        assert {"export_json", "export_markdown"} <= set(names)
        assert "export_netscape" not in names


def test_export_selected_bookmarks_as_netscape_streams_only_the_selection(
    staff_client: Client, staff: Any
) -> None:
    chosen = BookmarkFactory(owner=staff, url="https://example.com/chosen", tags=["x"])
    BookmarkFactory(owner=staff, url="https://example.com/left-out")
    response = export(staff_client, Bookmark, "export_netscape", [chosen])
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="tiddly-export-')
    entries, _ = parse_netscape(body_of(response))
    assert [(e.url, e.tags) for e in entries if isinstance(e, NetscapeEntry)] == [
        ("https://example.com/chosen", ["x"])
    ]


def test_export_selected_notes_as_json_includes_trashed_selections(
    staff_client: Client, staff: Any
) -> None:
    from django.utils import timezone

    live = NoteFactory(owner=staff, title="Live", content="body")
    trashed = NoteFactory(owner=staff, title="Trashed", deleted_at=timezone.now())
    response = export(staff_client, Note, "export_json", [live, trashed])
    assert response.status_code == 200
    document = json.loads(body_of(response))
    assert sorted(i["title"] for i in document["items"]) == ["Live", "Trashed"]
    assert {i["type"] for i in document["items"]} == {"note"}


def test_export_selected_prompts_as_markdown_is_a_zip_with_front_matter(
    staff_client: Client, staff: Any
) -> None:
    prompt = PromptFactory(owner=staff, name="greet")
    response = export(staff_client, Prompt, "export_markdown", [prompt])
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(body_of(response)))
    assert archive.namelist() == ["prompts/greet.md"]
    assert "name: greet" in archive.read("prompts/greet.md").decode()


def test_a_stranger_s_bookmarks_cannot_be_exported_by_selecting_their_ids(
    staff_client: Client, other: Any
) -> None:
    theirs = BookmarkFactory(owner=other, url="https://example.com/theirs")
    response = export(staff_client, Bookmark, "export_json", [theirs])
    assert not response.streaming
    assert b"example.com/theirs" not in response.content


def test_a_superuser_exports_one_owner_at_a_time(
    admin_client: Client, owner: Any, other: Any
) -> None:
    mine = BookmarkFactory(owner=owner, url="https://example.com/mine")
    theirs = BookmarkFactory(owner=other, url="https://example.com/theirs")
    body = {"action": "export_json", "_selected_action": [str(mine.pk), str(theirs.pk)]}
    response = admin_client.post(changelist_url(Bookmark), body, follow=True)
    assert "Select items of one owner to export them together." in texts(response)
    single = admin_client.post(
        changelist_url(Bookmark), {**body, "_selected_action": [str(theirs.pk)]}
    )
    items = json.loads(body_of(single))["items"]
    assert [i["url"] for i in items] == ["https://example.com/theirs"]
