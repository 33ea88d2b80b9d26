"""SQLite: bring the content index's update trigger to what 0011 creates today, and refill the
index.

Databases migrated before 0011's opening went from 100 000 to 20 000 characters kept triggers
that index each content's first 100 000 characters (0011 read its SQL from application code
then; it is frozen now). 0016 recreated the insert and delete triggers (with 20 000); this
recreates the update trigger and rebuilds the index from the rows, so every database ends in the
same state. Idempotent: on a database that already has it, it recreates the same trigger and the
same index. The SQL is written out here, never imported. Nothing to do on PostgreSQL."""

from typing import Any

from django.db import migrations


class RunSQLiteSQL(migrations.RunSQL):
    """``RunSQL`` that is skipped on databases other than SQLite."""

    def database_forwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == "sqlite":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        pass  # the triggers of 0011 stay: there is no older state worth going back to


_NOTE_ALL = [
    'DROP TRIGGER IF EXISTS "content_note_search_insert"',
    'DROP TRIGGER IF EXISTS "content_note_search_update"',
    'DROP TRIGGER IF EXISTS "content_note_search_delete"',
    'CREATE TRIGGER "content_note_search_insert" AFTER INSERT ON "content_note" BEGIN INSERT INTO '
    '"content_note_search_key" (id) VALUES (new.id); INSERT INTO "content_note_search" (rowid, '
    'head, opening, raw) VALUES ((SELECT key FROM "content_note_search_key" WHERE id = new.id), '
    "lower(coalesce(new.title,'') || char(10) || coalesce(new.description,'')), "
    "lower(substr(coalesce(new.content,''),1,20000)), substr(coalesce(new.content,''),1,20000)); "
    "END",
    'CREATE TRIGGER "content_note_search_update" AFTER UPDATE OF title, description, content ON '
    "\"content_note\" WHEN lower(coalesce(old.title,'') || char(10) || "
    "coalesce(old.description,'')) IS NOT lower(coalesce(new.title,'') || char(10) || "
    "coalesce(new.description,'')) OR substr(coalesce(old.content,''),1,20000) IS NOT "
    "substr(coalesce(new.content,''),1,20000) BEGIN DELETE FROM \"content_note_search\" WHERE "
    'rowid = (SELECT key FROM "content_note_search_key" WHERE id = new.id); INSERT INTO '
    '"content_note_search" (rowid, head, opening, raw) VALUES ((SELECT key FROM '
    "\"content_note_search_key\" WHERE id = new.id), lower(coalesce(new.title,'') || char(10) || "
    "coalesce(new.description,'')), lower(substr(coalesce(new.content,''),1,20000)), "
    "substr(coalesce(new.content,''),1,20000)); END",
    'CREATE TRIGGER "content_note_search_delete" AFTER DELETE ON "content_note" BEGIN DELETE FROM '
    '"content_note_search" WHERE rowid = (SELECT key FROM "content_note_search_key" WHERE id = '
    'old.id); DELETE FROM "content_note_search_key" WHERE id = old.id; END',
    'DELETE FROM "content_note_search"',
    'INSERT INTO "content_note_search" (rowid, head, opening, raw) SELECT k.key, '
    "lower(coalesce(t.title,'') || char(10) || coalesce(t.description,'')), "
    "lower(substr(coalesce(t.content,''),1,20000)), substr(coalesce(t.content,''),1,20000) FROM "
    '"content_note_search_key" k JOIN "content_note" t ON t.id = k.id',
]

_BOOKMARK_ALL = [
    'DROP TRIGGER IF EXISTS "content_bookmark_search_insert"',
    'DROP TRIGGER IF EXISTS "content_bookmark_search_update"',
    'DROP TRIGGER IF EXISTS "content_bookmark_search_delete"',
    'CREATE TRIGGER "content_bookmark_search_insert" AFTER INSERT ON "content_bookmark" BEGIN '
    'INSERT INTO "content_bookmark_search_key" (id) VALUES (new.id); INSERT INTO '
    '"content_bookmark_search" (rowid, head, opening, raw) VALUES ((SELECT key FROM '
    "\"content_bookmark_search_key\" WHERE id = new.id), lower(coalesce(new.title,'') || char(10) "
    "|| coalesce(new.description,'') || char(10) || coalesce(new.url,'')), "
    "lower(substr(coalesce(new.content,''),1,20000)), substr(coalesce(new.content,''),1,20000)); "
    "END",
    'CREATE TRIGGER "content_bookmark_search_update" AFTER UPDATE OF title, description, url, '
    "content ON \"content_bookmark\" WHEN lower(coalesce(old.title,'') || char(10) || "
    "coalesce(old.description,'') || char(10) || coalesce(old.url,'')) IS NOT "
    "lower(coalesce(new.title,'') || char(10) || coalesce(new.description,'') || char(10) || "
    "coalesce(new.url,'')) OR substr(coalesce(old.content,''),1,20000) IS NOT "
    "substr(coalesce(new.content,''),1,20000) BEGIN DELETE FROM \"content_bookmark_search\" WHERE "
    'rowid = (SELECT key FROM "content_bookmark_search_key" WHERE id = new.id); INSERT INTO '
    '"content_bookmark_search" (rowid, head, opening, raw) VALUES ((SELECT key FROM '
    "\"content_bookmark_search_key\" WHERE id = new.id), lower(coalesce(new.title,'') || char(10) "
    "|| coalesce(new.description,'') || char(10) || coalesce(new.url,'')), "
    "lower(substr(coalesce(new.content,''),1,20000)), substr(coalesce(new.content,''),1,20000)); "
    "END",
    'CREATE TRIGGER "content_bookmark_search_delete" AFTER DELETE ON "content_bookmark" BEGIN '
    'DELETE FROM "content_bookmark_search" WHERE rowid = (SELECT key FROM '
    '"content_bookmark_search_key" WHERE id = old.id); DELETE FROM "content_bookmark_search_key" '
    "WHERE id = old.id; END",
    'DELETE FROM "content_bookmark_search"',
    'INSERT INTO "content_bookmark_search" (rowid, head, opening, raw) SELECT k.key, '
    "lower(coalesce(t.title,'') || char(10) || coalesce(t.description,'') || char(10) || "
    "coalesce(t.url,'')), lower(substr(coalesce(t.content,''),1,20000)), "
    "substr(coalesce(t.content,''),1,20000) FROM \"content_bookmark_search_key\" k JOIN "
    '"content_bookmark" t ON t.id = k.id',
]

# The update trigger (drop, create), then the index emptied and refilled.
NOTE = [_NOTE_ALL[1], _NOTE_ALL[4], _NOTE_ALL[6], _NOTE_ALL[7]]
BOOKMARK = [_BOOKMARK_ALL[1], _BOOKMARK_ALL[4], _BOOKMARK_ALL[6], _BOOKMARK_ALL[7]]


class Migration(migrations.Migration):
    dependencies = [("content", "0018_webhook_deliveries_name")]
    operations = [
        RunSQLiteSQL(NOTE, migrations.RunSQL.noop),
        RunSQLiteSQL(BOOKMARK, migrations.RunSQL.noop),
    ]
