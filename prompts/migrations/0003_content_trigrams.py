"""PostgreSQL/SQLite search SQL for prompts.

Its SQL is frozen below as it was run (it came from ``content.dbops.content_trigram_sql``): the
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


FORWARD_0 = ('CREATE EXTENSION IF NOT EXISTS pg_trgm; ALTER TABLE "prompts_prompt" ADD COLUMN '
 "content_opening text GENERATED ALWAYS AS (lower(left(coalesce(content, ''), 100000))) "
 'STORED; CREATE INDEX IF NOT EXISTS "prompts_prompt_content_trgm" ON "prompts_prompt" USING '
 'gin (content_opening gin_trgm_ops);')
BACKWARD_0 = ('DROP INDEX IF EXISTS "prompts_prompt_content_trgm"; ALTER TABLE "prompts_prompt" DROP COLUMN '
 'IF EXISTS content_opening;')


class Migration(migrations.Migration):
    dependencies = [('prompts', '0002_postgres_full_text_search')]
    operations = [
        RunVendorSQL('postgresql', FORWARD_0, BACKWARD_0),
    ]
