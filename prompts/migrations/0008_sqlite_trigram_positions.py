"""SQLite: prompts' trigram index (``"prompts_prompt_search"``, migration 0004) rebuilt with
``detail=full``, as content/migrations/0020 does for notes and bookmarks (why: there)."""

from django.db import migrations

TABLES = ("prompts_prompt",)


def rebuild(table: str, detail: str) -> list[str]:
    index = f'"{table}_search"'
    copy = f'"{table}_search_copy"'
    return [
        f"CREATE TEMP TABLE {copy} AS SELECT rowid AS id, head, opening, raw FROM {index}",
        f"DROP TABLE {index}",
        f"CREATE VIRTUAL TABLE {index} USING fts5("
        f"head, opening, raw UNINDEXED, tokenize='trigram', detail='{detail}')",
        f"INSERT INTO {index} (rowid, head, opening, raw) "
        f"SELECT id, head, opening, raw FROM {copy}",
        f"DROP TABLE {copy}",
    ]


class RunSQLiteSQL(migrations.RunSQL):
    """``RunSQL`` on SQLite only (PostgreSQL has its own trigram indexes)."""

    def database_forwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            super().database_backwards(app_label, schema_editor, *args)


class Migration(migrations.Migration):
    dependencies = [("prompts", "0007_postgres_words")]
    operations = [RunSQLiteSQL(rebuild(t, "full"), rebuild(t, "none")) for t in TABLES]
