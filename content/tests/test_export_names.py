"""Markdown export: entry names safe on every OS, and no silent empty zip (SPEC §14)."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest

from content.tests.factories import BookmarkFactory, NoteFactory
from content.tests.portability_support import download

pytestmark = pytest.mark.django_db


def test_notes_named_like_windows_devices_get_safe_entry_names(api: Any, owner: Any) -> None:
    for title in ("con", "NUL", "aux", "com1", "lpt9", "prn", "Console"):
        NoteFactory(owner=owner, title=title, content="x")
    response = download(api, format="markdown")
    assert response.status_code == 200
    names = sorted(zipfile.ZipFile(io.BytesIO(response.body)).namelist())
    assert names == [
        "notes/aux-note.md",
        "notes/com1-note.md",
        "notes/con-note.md",
        "notes/console.md",
        "notes/lpt9-note.md",
        "notes/nul-note.md",
        "notes/prn-note.md",
    ]


def test_a_markdown_export_of_bookmarks_only_is_a_400_naming_the_formats_that_hold_them(
    api: Any, owner: Any
) -> None:
    BookmarkFactory(owner=owner)
    response = download(api, format="markdown")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "validation_error"
    assert "notes and prompts only" in body["fields"]["format"][0]
    assert "format=json" in body["fields"]["format"][0]
