"""SQLite: a write to a full-text index merges its segments only once a level holds 8 of them.

FTS5 stores an index as segments: every write adds one, and by default the write itself merges
any level that holds 4 (``automerge``). With 8 a segment is rewritten about half as often as the
index grows (a level per factor of 8 instead of 4), so a long note's create pays about half the
merging; a query reads a few more segments, which measured no slower over 10 000 notes. What
the index finds does not change. The setting lives in each table's ``_config`` (content migration
0027 does the same for notes and bookmarks); nothing on PostgreSQL.
"""

from django.db import migrations

TABLES = ("prompts_prompt_words", "prompts_prompt_search")


def setting(value: int) -> list[str]:
    return [f'INSERT INTO "{t}" ("{t}", rank) VALUES (\'automerge\', {value})' for t in TABLES]


class RunSQLiteSQL(migrations.RunSQL):
    """``RunSQL`` on SQLite only."""

    def database_forwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            super().database_backwards(app_label, schema_editor, *args)


class Migration(migrations.Migration):
    dependencies = [("prompts", "0008_sqlite_trigram_positions")]
    operations = [RunSQLiteSQL(setting(8), setting(4))]
