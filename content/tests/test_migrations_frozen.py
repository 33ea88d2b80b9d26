"""Migrations hold still (issue 28): they carry their own SQL, and 0019 brings SQLite databases
migrated before the 20 000-character opening to the current triggers."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
MIGRATIONS = ROOT / "content" / "migrations"
# Every app's migrations: prompts' search migrations once ran content.dbops' SQL too.
ALL_MIGRATIONS = [ROOT / app / "migrations" for app in ("content", "prompts", "tiddly")]
# 0006's column default is the model layer's TransactionId expression: the migration state must
# name the same class as the model, or makemigrations sees a change.
ALLOWED = {"0006_change_log_and_webhooks.py": {"content.models.changes"}}


def test_no_migration_imports_application_code() -> None:
    offenders = []
    paths = sorted(path for folder in ALL_MIGRATIONS for path in folder.glob("0*.py"))
    assert len(paths) > 30  # the three apps' folders were found
    for path in paths:
        for module in re.findall(
            r"^\s*(?:from|import) ((?:content|tiddly|prompts|mcp_bridge)\S*)",
            path.read_text(),
            flags=re.M,
        ):
            if module not in ALLOWED.get(path.name, set()):
                offenders.append(f"{path.name}: {module}")
        # Loading another module at run time (even an older migration) lets its later edits
        # change what this migration does.
        if re.search(r"\bimport_module\(|__import__\(", path.read_text()):
            offenders.append(f"{path.name}: loads a module at run time")
    assert offenders == []


def _triggers() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        return {name: sql for name, sql in cursor.fetchall() if "_search_" in name}


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's content index")
@pytest.mark.django_db
def test_0019_brings_old_triggers_to_the_current_opening_and_refills_the_index(
    owner: Any,
) -> None:
    from content.models import Note

    migration = importlib.import_module("content.migrations.0019_sqlite_opening_triggers")
    with connection.cursor() as cursor:  # as a database migrated before the change has them
        for sql in migration.NOTE[:2]:
            cursor.execute(sql.replace(",1,20000)", ",1,100000)"))
    old = _triggers()["content_note_search_update"]
    assert ",1,100000)" in old
    note = Note.objects.create(owner=owner, title="t", content="x" * 30_000 + "needle")

    for _ in range(2):  # idempotent
        with connection.cursor() as cursor:
            for sql in migration.NOTE:
                cursor.execute(sql)

    note_triggers = {n: s for n, s in _triggers().items() if n.startswith("content_note")}
    assert ",1,20000)" in note_triggers["content_note_search_update"]
    assert all(",1,100000)" not in s for s in note_triggers.values())
    assert "_words" in note_triggers["content_note_search_insert"]  # 0016's, left alone
    with connection.cursor() as cursor:
        cursor.execute('SELECT max(length(raw)) FROM "content_note_search"')
        assert cursor.fetchone()[0] == 20_000
    assert note.pk
