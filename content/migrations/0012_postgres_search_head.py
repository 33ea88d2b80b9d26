"""PostgreSQL: a stored tsvector of the short fields, which hybrid search's keyword leg ranks by
(its SQL is frozen below; it came from ``content.dbops.search_head_sql``).

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


FORWARD_0 = ('ALTER TABLE "content_note" ADD COLUMN search_head tsvector GENERATED ALWAYS AS '
 "(setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A') || "
 "setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B')) STORED, ADD "
 "COLUMN head_text text GENERATED ALWAYS AS (lower(coalesce(title, '') || chr(10) || "
 'coalesce(description, \'\'))) STORED; CREATE INDEX "content_note_search_head" ON '
 '"content_note" USING gin (search_head); CREATE INDEX "content_note_head_text" ON '
 '"content_note" USING gin (head_text gin_trgm_ops);')
BACKWARD_0 = ('DROP INDEX IF EXISTS "content_note_head_text"; DROP INDEX IF EXISTS '
 '"content_note_search_head"; ALTER TABLE "content_note" DROP COLUMN IF EXISTS head_text, DROP '
 'COLUMN IF EXISTS search_head;')

FORWARD_1 = ('ALTER TABLE "content_bookmark" ADD COLUMN search_head tsvector GENERATED ALWAYS AS '
 "(setweight(to_tsvector('english'::regconfig, coalesce(title, '') || ' ' || coalesce(url, "
 "'')), 'A') || setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B')) "
 "STORED, ADD COLUMN head_text text GENERATED ALWAYS AS (lower(coalesce(title, '') || ' ' || "
 "coalesce(url, '') || chr(10) || coalesce(description, ''))) STORED; CREATE INDEX "
 '"content_bookmark_search_head" ON "content_bookmark" USING gin (search_head); CREATE INDEX '
 '"content_bookmark_head_text" ON "content_bookmark" USING gin (head_text gin_trgm_ops);')
BACKWARD_1 = ('DROP INDEX IF EXISTS "content_bookmark_head_text"; DROP INDEX IF EXISTS '
 '"content_bookmark_search_head"; ALTER TABLE "content_bookmark" DROP COLUMN IF EXISTS '
 'head_text, DROP COLUMN IF EXISTS search_head;')


class Migration(migrations.Migration):
    dependencies = [('content', '0011_sqlite_content_opening')]
    operations = [
        RunVendorSQL('postgresql', FORWARD_0, BACKWARD_0),
        RunVendorSQL('postgresql', FORWARD_1, BACKWARD_1),
    ]
