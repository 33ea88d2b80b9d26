"""PostgreSQL/SQLite search SQL for prompts.

Its SQL is frozen below as it was run (it came from ``content.dbops.search_vector_sql``): the
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


FORWARD_0 = ('ALTER TABLE "prompts_prompt" ADD COLUMN search_vector tsvector GENERATED ALWAYS AS '
 "(setweight(to_tsvector('english'::regconfig, coalesce(title, '') || ' ' || coalesce(name, "
 "'')), 'A') || setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B') "
 "|| setweight(to_tsvector('english'::regconfig, left(coalesce(content, ''), 100000)), 'C')) "
 'STORED; CREATE INDEX "prompts_prompt_search_vector" ON "prompts_prompt" USING gin '
 '(search_vector); ALTER TABLE "prompts_prompt" ALTER COLUMN content SET COMPRESSION lz4;')
BACKWARD_0 = ('DROP INDEX IF EXISTS "prompts_prompt_search_vector"; ALTER TABLE "prompts_prompt" DROP '
 'COLUMN IF EXISTS search_vector; ALTER TABLE "prompts_prompt" ALTER COLUMN content SET '
 'COMPRESSION DEFAULT;')


class Migration(migrations.Migration):
    dependencies = [('prompts', '0001_initial')]
    operations = [
        RunVendorSQL('postgresql', FORWARD_0, BACKWARD_0),
    ]
