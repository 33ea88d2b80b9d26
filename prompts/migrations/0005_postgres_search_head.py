"""PostgreSQL: a stored tsvector of a prompt's short fields (see content/migrations/0012).

Its SQL is frozen below as it was run (it came from ``content.dbops.search_head_sql``): the
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


FORWARD_0 = ('ALTER TABLE "prompts_prompt" ADD COLUMN search_head tsvector GENERATED ALWAYS AS '
 "(setweight(to_tsvector('english'::regconfig, coalesce(title, '') || ' ' || coalesce(name, "
 "'')), 'A') || setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B')) "
 "STORED, ADD COLUMN head_text text GENERATED ALWAYS AS (lower(coalesce(title, '') || ' ' || "
 "coalesce(name, '') || chr(10) || coalesce(description, ''))) STORED; CREATE INDEX "
 '"prompts_prompt_search_head" ON "prompts_prompt" USING gin (search_head); CREATE INDEX '
 '"prompts_prompt_head_text" ON "prompts_prompt" USING gin (head_text gin_trgm_ops);')
BACKWARD_0 = ('DROP INDEX IF EXISTS "prompts_prompt_head_text"; DROP INDEX IF EXISTS '
 '"prompts_prompt_search_head"; ALTER TABLE "prompts_prompt" DROP COLUMN IF EXISTS head_text, '
 'DROP COLUMN IF EXISTS search_head;')


class Migration(migrations.Migration):
    dependencies = [('prompts', '0004_sqlite_content_opening')]
    operations = [
        RunVendorSQL('postgresql', FORWARD_0, BACKWARD_0),
    ]
