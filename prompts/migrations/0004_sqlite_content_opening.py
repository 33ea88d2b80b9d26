"""SQLite: a prompt's ``content`` becomes the last column, and its short fields and content's
opening get an FTS5 trigram index (see content/migrations/0011).

Its SQL is frozen below as it was run (it came from ``content.dbops.sqlite_opening_sql``): the
application code it came from may change."""

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


FORWARD_0 = ['ALTER TABLE "prompts_prompt" ADD COLUMN content_last text NULL',
 'UPDATE "prompts_prompt" SET content_last = content',
 'ALTER TABLE "prompts_prompt" DROP COLUMN content',
 'ALTER TABLE "prompts_prompt" RENAME COLUMN content_last TO content',
 'CREATE TABLE "prompts_prompt_search_key" (key integer NOT NULL PRIMARY KEY, id char(32) NOT '
 'NULL UNIQUE)',
 'CREATE VIRTUAL TABLE "prompts_prompt_search" USING fts5(head, opening, raw UNINDEXED, '
 "tokenize='trigram', detail='none')",
 'INSERT INTO "prompts_prompt_search_key" (id) SELECT id FROM "prompts_prompt"',
 'INSERT INTO "prompts_prompt_search" (rowid, head, opening, raw) SELECT k.key, '
 "lower(coalesce(t.title,'') || char(10) || coalesce(t.description,'') || char(10) || "
 "coalesce(t.name,'')), lower(substr(coalesce(t.content,''),1,20000)), "
 'substr(coalesce(t.content,\'\'),1,20000) FROM "prompts_prompt_search_key" k JOIN '
 '"prompts_prompt" t ON t.id = k.id',
 'CREATE TRIGGER "prompts_prompt_search_insert" AFTER INSERT ON "prompts_prompt" BEGIN INSERT '
 'INTO "prompts_prompt_search_key" (id) VALUES (new.id); INSERT INTO "prompts_prompt_search" '
 '(rowid, head, opening, raw) VALUES ((SELECT key FROM "prompts_prompt_search_key" WHERE id = '
 "new.id), lower(coalesce(new.title,'') || char(10) || coalesce(new.description,'') || "
 "char(10) || coalesce(new.name,'')), lower(substr(coalesce(new.content,''),1,20000)), "
 "substr(coalesce(new.content,''),1,20000)); END",
 'CREATE TRIGGER "prompts_prompt_search_update" AFTER UPDATE OF title, description, name, '
 'content ON "prompts_prompt" WHEN lower(coalesce(old.title,\'\') || char(10) || '
 "coalesce(old.description,'') || char(10) || coalesce(old.name,'')) IS NOT "
 "lower(coalesce(new.title,'') || char(10) || coalesce(new.description,'') || char(10) || "
 "coalesce(new.name,'')) OR substr(coalesce(old.content,''),1,20000) IS NOT "
 'substr(coalesce(new.content,\'\'),1,20000) BEGIN DELETE FROM "prompts_prompt_search" WHERE '
 'rowid = (SELECT key FROM "prompts_prompt_search_key" WHERE id = new.id); INSERT INTO '
 '"prompts_prompt_search" (rowid, head, opening, raw) VALUES ((SELECT key FROM '
 '"prompts_prompt_search_key" WHERE id = new.id), lower(coalesce(new.title,\'\') || char(10) '
 "|| coalesce(new.description,'') || char(10) || coalesce(new.name,'')), "
 "lower(substr(coalesce(new.content,''),1,20000)), substr(coalesce(new.content,''),1,20000)); "
 'END',
 'CREATE TRIGGER "prompts_prompt_search_delete" AFTER DELETE ON "prompts_prompt" BEGIN DELETE '
 'FROM "prompts_prompt_search" WHERE rowid = (SELECT key FROM "prompts_prompt_search_key" '
 'WHERE id = old.id); DELETE FROM "prompts_prompt_search_key" WHERE id = old.id; END']
BACKWARD_0 = ['DROP TRIGGER IF EXISTS "prompts_prompt_search_delete"',
 'DROP TRIGGER IF EXISTS "prompts_prompt_search_update"',
 'DROP TRIGGER IF EXISTS "prompts_prompt_search_insert"',
 'DROP TABLE IF EXISTS "prompts_prompt_search"',
 'DROP TABLE IF EXISTS "prompts_prompt_search_key"']


class Migration(migrations.Migration):
    dependencies = [('prompts', '0003_content_trigrams')]
    operations = [
        RunVendorSQL('sqlite', FORWARD_0, BACKWARD_0),
    ]
