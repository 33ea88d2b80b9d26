"""SQLite: the trigram index of the short fields and the content's opening (``"{table}_search"``,
migration 0011) rebuilt with ``detail=full`` (trigram positions). A substring is then answered
by a phrase query of its trigrams, from the index alone; with ``detail=none`` FTS5 could only
name candidates (every row holding all the trigrams) and each one's text was read and GLOB-
checked: ~40 ms for a word in 2 000 of 10 000 notes, paid by the page and by the count.
Same rows and columns; the triggers that keep it (0016, 0019) name the table only, so they
stay. ``prompts/migrations/0008`` does the same for prompts."""

from django.db import migrations

TABLES = ("content_note", "content_bookmark")


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
    dependencies = [("content", "0019_sqlite_opening_triggers")]
    operations = [RunSQLiteSQL(rebuild(t, "full"), rebuild(t, "none")) for t in TABLES]
