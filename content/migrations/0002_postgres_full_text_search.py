"""0002_postgres_full_text_search

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


FORWARD_0 = ('ALTER TABLE "content_note" ADD COLUMN search_vector tsvector GENERATED ALWAYS AS '
 "(setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A') || "
 "setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B') || "
 "setweight(to_tsvector('english'::regconfig, left(coalesce(content, ''), 100000)), 'C')) "
 'STORED; CREATE INDEX "content_note_search_vector" ON "content_note" USING gin '
 '(search_vector); ALTER TABLE "content_note" ALTER COLUMN content SET COMPRESSION lz4;')
BACKWARD_0 = ('DROP INDEX IF EXISTS "content_note_search_vector"; ALTER TABLE "content_note" DROP COLUMN IF '
 'EXISTS search_vector; ALTER TABLE "content_note" ALTER COLUMN content SET COMPRESSION '
 'DEFAULT;')

FORWARD_1 = ('ALTER TABLE "content_bookmark" ADD COLUMN search_vector tsvector GENERATED ALWAYS AS '
 "(setweight(to_tsvector('english'::regconfig, coalesce(title, '') || ' ' || coalesce(url, "
 "'')), 'A') || setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B') "
 "|| setweight(to_tsvector('english'::regconfig, left(coalesce(content, ''), 100000)), 'C')) "
 'STORED; CREATE INDEX "content_bookmark_search_vector" ON "content_bookmark" USING gin '
 '(search_vector); ALTER TABLE "content_bookmark" ALTER COLUMN content SET COMPRESSION lz4;')
BACKWARD_1 = ('DROP INDEX IF EXISTS "content_bookmark_search_vector"; ALTER TABLE "content_bookmark" DROP '
 'COLUMN IF EXISTS search_vector; ALTER TABLE "content_bookmark" ALTER COLUMN content SET '
 'COMPRESSION DEFAULT;')

FORWARD_2 = 'ALTER TABLE "content_itemversion" ALTER COLUMN content_snapshot SET COMPRESSION lz4;'
BACKWARD_2 = 'ALTER TABLE "content_itemversion" ALTER COLUMN content_snapshot SET COMPRESSION DEFAULT;'


class Migration(migrations.Migration):
    dependencies = [('content', '0001_initial')]
    operations = [
        RunVendorSQL('postgresql', FORWARD_0, BACKWARD_0),
        RunVendorSQL('postgresql', FORWARD_1, BACKWARD_1),
        RunVendorSQL('postgresql', FORWARD_2, BACKWARD_2),
    ]
