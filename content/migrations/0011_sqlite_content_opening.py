"""SQLite: ``content`` becomes the last column (reading the columns after a large content walked
its overflow pages), and an FTS5 trigram index of the short fields and the content's opening,
kept by triggers, serves hybrid search's keyword leg and typo tolerance as PostgreSQL's trigram
index has since 0008. Its SQL is frozen below (it came from ``content.dbops.sqlite_opening_sql``).

The SQL is written out here as it was run: the application code it came from may change."""

from typing import Any

from django.db import migrations


class RunVendorSQL(migrations.RunSQL):
    """``RunSQL`` that is skipped on databases other than ``vendor`` (frozen here: a migration
    never imports application code, whose later edits would change what it does)."""

    def __init__(self, vendor: str, sql: Any, reverse_sql: Any) -> None:
        super().__init__(sql, reverse_sql)
        self.vendor = vendor

    def database_forwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == self.vendor:
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == self.vendor:
            super().database_backwards(app_label, schema_editor, *args)


FORWARD_0 = ['ALTER TABLE "content_note" ADD COLUMN content_last text NULL',
 'UPDATE "content_note" SET content_last = content',
 'ALTER TABLE "content_note" DROP COLUMN content',
 'ALTER TABLE "content_note" RENAME COLUMN content_last TO content',
 'CREATE TABLE "content_note_search_key" (key integer NOT NULL PRIMARY KEY, id char(32) NOT '
 'NULL UNIQUE)',
 'CREATE VIRTUAL TABLE "content_note_search" USING fts5(head, opening, raw UNINDEXED, '
 "tokenize='trigram', detail='none')",
 'INSERT INTO "content_note_search_key" (id) SELECT id FROM "content_note"',
 'INSERT INTO "content_note_search" (rowid, head, opening, raw) SELECT k.key, '
 "lower(coalesce(t.title,'') || char(10) || coalesce(t.description,'')), "
 "lower(substr(coalesce(t.content,''),1,20000)), substr(coalesce(t.content,''),1,20000) FROM "
 '"content_note_search_key" k JOIN "content_note" t ON t.id = k.id',
 'CREATE TRIGGER "content_note_search_insert" AFTER INSERT ON "content_note" BEGIN INSERT INTO '
 '"content_note_search_key" (id) VALUES (new.id); INSERT INTO "content_note_search" (rowid, '
 'head, opening, raw) VALUES ((SELECT key FROM "content_note_search_key" WHERE id = new.id), '
 "lower(coalesce(new.title,'') || char(10) || coalesce(new.description,'')), "
 "lower(substr(coalesce(new.content,''),1,20000)), substr(coalesce(new.content,''),1,20000)); "
 'END',
 'CREATE TRIGGER "content_note_search_update" AFTER UPDATE OF title, description, content ON '
 '"content_note" WHEN lower(coalesce(old.title,\'\') || char(10) || '
 "coalesce(old.description,'')) IS NOT lower(coalesce(new.title,'') || char(10) || "
 "coalesce(new.description,'')) OR substr(coalesce(old.content,''),1,20000) IS NOT "
 'substr(coalesce(new.content,\'\'),1,20000) BEGIN DELETE FROM "content_note_search" WHERE '
 'rowid = (SELECT key FROM "content_note_search_key" WHERE id = new.id); INSERT INTO '
 '"content_note_search" (rowid, head, opening, raw) VALUES ((SELECT key FROM '
 '"content_note_search_key" WHERE id = new.id), lower(coalesce(new.title,\'\') || char(10) || '
 "coalesce(new.description,'')), lower(substr(coalesce(new.content,''),1,20000)), "
 "substr(coalesce(new.content,''),1,20000)); END",
 'CREATE TRIGGER "content_note_search_delete" AFTER DELETE ON "content_note" BEGIN DELETE FROM '
 '"content_note_search" WHERE rowid = (SELECT key FROM "content_note_search_key" WHERE id = '
 'old.id); DELETE FROM "content_note_search_key" WHERE id = old.id; END']
BACKWARD_0 = ['DROP TRIGGER IF EXISTS "content_note_search_delete"',
 'DROP TRIGGER IF EXISTS "content_note_search_update"',
 'DROP TRIGGER IF EXISTS "content_note_search_insert"',
 'DROP TABLE IF EXISTS "content_note_search"',
 'DROP TABLE IF EXISTS "content_note_search_key"']

FORWARD_1 = ['ALTER TABLE "content_bookmark" ADD COLUMN content_last text NULL',
 'UPDATE "content_bookmark" SET content_last = content',
 'ALTER TABLE "content_bookmark" DROP COLUMN content',
 'ALTER TABLE "content_bookmark" RENAME COLUMN content_last TO content',
 'CREATE TABLE "content_bookmark_search_key" (key integer NOT NULL PRIMARY KEY, id char(32) '
 'NOT NULL UNIQUE)',
 'CREATE VIRTUAL TABLE "content_bookmark_search" USING fts5(head, opening, raw UNINDEXED, '
 "tokenize='trigram', detail='none')",
 'INSERT INTO "content_bookmark_search_key" (id) SELECT id FROM "content_bookmark"',
 'INSERT INTO "content_bookmark_search" (rowid, head, opening, raw) SELECT k.key, '
 "lower(coalesce(t.title,'') || char(10) || coalesce(t.description,'') || char(10) || "
 "coalesce(t.url,'')), lower(substr(coalesce(t.content,''),1,20000)), "
 'substr(coalesce(t.content,\'\'),1,20000) FROM "content_bookmark_search_key" k JOIN '
 '"content_bookmark" t ON t.id = k.id',
 'CREATE TRIGGER "content_bookmark_search_insert" AFTER INSERT ON "content_bookmark" BEGIN '
 'INSERT INTO "content_bookmark_search_key" (id) VALUES (new.id); INSERT INTO '
 '"content_bookmark_search" (rowid, head, opening, raw) VALUES ((SELECT key FROM '
 '"content_bookmark_search_key" WHERE id = new.id), lower(coalesce(new.title,\'\') || char(10) '
 "|| coalesce(new.description,'') || char(10) || coalesce(new.url,'')), "
 "lower(substr(coalesce(new.content,''),1,20000)), substr(coalesce(new.content,''),1,20000)); "
 'END',
 'CREATE TRIGGER "content_bookmark_search_update" AFTER UPDATE OF title, description, url, '
 'content ON "content_bookmark" WHEN lower(coalesce(old.title,\'\') || char(10) || '
 "coalesce(old.description,'') || char(10) || coalesce(old.url,'')) IS NOT "
 "lower(coalesce(new.title,'') || char(10) || coalesce(new.description,'') || char(10) || "
 "coalesce(new.url,'')) OR substr(coalesce(old.content,''),1,20000) IS NOT "
 'substr(coalesce(new.content,\'\'),1,20000) BEGIN DELETE FROM "content_bookmark_search" WHERE '
 'rowid = (SELECT key FROM "content_bookmark_search_key" WHERE id = new.id); INSERT INTO '
 '"content_bookmark_search" (rowid, head, opening, raw) VALUES ((SELECT key FROM '
 '"content_bookmark_search_key" WHERE id = new.id), lower(coalesce(new.title,\'\') || char(10) '
 "|| coalesce(new.description,'') || char(10) || coalesce(new.url,'')), "
 "lower(substr(coalesce(new.content,''),1,20000)), substr(coalesce(new.content,''),1,20000)); "
 'END',
 'CREATE TRIGGER "content_bookmark_search_delete" AFTER DELETE ON "content_bookmark" BEGIN '
 'DELETE FROM "content_bookmark_search" WHERE rowid = (SELECT key FROM '
 '"content_bookmark_search_key" WHERE id = old.id); DELETE FROM "content_bookmark_search_key" '
 'WHERE id = old.id; END']
BACKWARD_1 = ['DROP TRIGGER IF EXISTS "content_bookmark_search_delete"',
 'DROP TRIGGER IF EXISTS "content_bookmark_search_update"',
 'DROP TRIGGER IF EXISTS "content_bookmark_search_insert"',
 'DROP TABLE IF EXISTS "content_bookmark_search"',
 'DROP TABLE IF EXISTS "content_bookmark_search_key"']


class Migration(migrations.Migration):
    dependencies = [('content', '0010_webhook_feed_position')]
    operations = [
        RunVendorSQL('sqlite', FORWARD_0, BACKWARD_0),
        RunVendorSQL('sqlite', FORWARD_1, BACKWARD_1),
    ]
