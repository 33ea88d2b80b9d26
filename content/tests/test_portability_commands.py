"""manage.py import_items / export_items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from content.management.commands.import_items import Command as ImportCommand
from content.models import Bookmark
from content.tests.portability_support import FIXTURES

pytestmark = pytest.mark.django_db


def test_import_items_imports_a_file_and_prints_a_summary(owner: Any, capsys: Any) -> None:
    call_command("import_items", "owner", str(FIXTURES / "chrome.html"))
    out = capsys.readouterr().out
    assert "Created 3 bookmark(s), 0 note(s), 0 prompt(s)." in out
    assert "Skipped 3 entr(y/ies)." in out
    assert Bookmark.objects.filter(owner=owner).count() == 3


def test_import_items_fails_with_the_message_on_a_malformed_file(
    owner: Any, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.html"
    broken.write_bytes((FIXTURES / "chrome.html").read_bytes()[:600])
    with pytest.raises(CommandError, match="truncated"):
        call_command("import_items", "owner", str(broken))
    assert Bookmark.objects.count() == 0


def test_import_items_exits_non_zero_from_the_command_line(
    owner: Any, tmp_path: Path, capsys: Any
) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text("<p>not bookmarks</p>")
    with pytest.raises(SystemExit) as info:
        ImportCommand().run_from_argv(["manage.py", "import_items", "owner", str(broken)])
    assert info.value.code == 1
    assert "This is not a bookmark file" in capsys.readouterr().err


def test_import_items_refuses_an_unknown_user(db: None) -> None:
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("import_items", "nobody", str(FIXTURES / "chrome.html"))


def test_export_items_writes_the_file(owner: Any, tmp_path: Path, capsys: Any) -> None:
    call_command("import_items", "owner", str(FIXTURES / "firefox.html"), "--on-conflict", "update")
    target = tmp_path / "out.json"
    call_command("export_items", "owner", "--format", "json", "-o", str(target))
    document = json.loads(target.read_text())
    assert len(document["items"]) == 5
    assert "Exported 5 item(s)" in capsys.readouterr().out
