"""SQLite: a full-text word index of each item's short fields and its WHOLE content (SPEC §3.3,
round 4): every word, "phrases", OR and -word, case- and accent-insensitive, kept by triggers in
the write's own transaction. The SQL lives here on purpose (a migration never imports
application code); ``prompts/migrations/0006_sqlite_words.py`` holds the same for prompts.

``"{table}_words"``: FTS5, ``porter unicode61 remove_diacritics 2`` (English stems as PostgreSQL's
``english`` configuration, "Café" = "cafe"), contentless (the text is in the table already). A
content is indexed in pieces of ``PIECE`` bytes (each overlapping the next by ``OVERLAP`` bytes,
so a word or short phrase across a boundary is whole in one piece), one FTS row each:
rowid = the item's key (``"{table}_search_key"``, migration 0011) × ``PIECES`` + the piece's
number; piece 0 holds the short fields too (columns ``title`` — with url or name —
and ``description``; ``body`` is the piece). An edit re-indexes only the pieces whose bytes
changed: an edit that keeps the content's length (most one-line replacements) costs one piece,
not 6 MB of tokenising. ``search_piece_numbers`` (0 … PIECES-1) lets a trigger, which cannot use
WITH, walk the pieces.

Migration 0011's insert and delete triggers are replaced by ones that keep both indexes: the key
row must exist before the word rows and outlive their deletion (SQLite does not promise an
order among triggers). Its update trigger (the trigram opening) stays.
"""

from django.db import migrations

PIECE = 262_144
OVERLAP = 256
PIECES = 4_096  # × PIECE = 1 GiB of content indexed at most (TIDDLY_MAX_CONTENT_CHARS: 10 M)
NUMBERS = "search_piece_numbers"
SIXTY_FOUR = "VALUES " + ",".join(f"({i})" for i in range(64))  # 64 × 64 = PIECES
#: table -> (its short fields, those of them weighed as the title: PostgreSQL's weight A)
TABLES = {
    "content_note": ("title", "description"),
    "content_bookmark": ("title", "description", "url"),
}


def head(row: str, fields: tuple[str, ...]) -> str:
    return " || char(10) || ".join(f"coalesce({row}{f},'')" for f in fields)


def short(row: str, fields: tuple[str, ...]) -> str:
    """The FTS columns ``title`` (title and url/name) and ``description``, piece 0 only."""
    extra = [f for f in fields if f not in ("title", "description")]
    title = head(row, ("title", *extra))
    return (
        f"CASE WHEN n.i = 0 THEN {title} END, "
        f"CASE WHEN n.i = 0 THEN coalesce({row}description,'') END"
    )


def piece(row: str, size: int = PIECE) -> str:
    # A blob's substr is by byte and costs no walk through the text before it.
    return f"substr(CAST(coalesce({row}content,'') AS BLOB), n.i * {size} + 1, {size + OVERLAP})"


def pieces(row: str, size: int = PIECE) -> str:
    # How many pieces (at least one, for the short fields): computed once per statement.
    return (
        f"(SELECT max(1, (length(CAST(coalesce({row}content,'') AS BLOB)) + {size - 1})"
        f" / {size}))"
    )


def rows(
    table: str,
    fields: tuple[str, ...],
    row: str,
    *,
    delete: bool,
    where: str = "",
    size: int = PIECE,
) -> str:
    """INSERT … SELECT of the word rows of ``row`` (``new.``/``old.``/``t.``), or of their
    'delete' commands (a contentless FTS5 table forgets a row given the text it indexed)."""
    words = f'"{table}_words"'
    key = f'(SELECT key FROM "{table}_search_key" WHERE id = {row[:-1]}.id)'
    if row == "t.":
        key = "k.key"
    command = f"{words}, " if delete else ""
    value = "'delete', " if delete else ""
    source = f"{NUMBERS} n"
    if row == "t.":
        source += f' CROSS JOIN "{table}_search_key" k CROSS JOIN "{table}" t ON t.id = k.id'
    count = pieces(row, size) if row != "t." else (
        f"max(1, (length(CAST(coalesce(t.content,'') AS BLOB)) + {size - 1}) / {size})"
    )
    return (
        f"INSERT INTO {words} ({command}rowid, title, description, body) "
        f"SELECT {value}{key} * {PIECES} + n.i, {short(row, fields)}, {piece(row, size)} "
        f"FROM {source} WHERE n.i < {count}{where}"
    )


def operations(
    table: str, fields: tuple[str, ...], size: int = PIECE
) -> tuple[list[str], list[str]]:
    """(forward, backward) SQL for ``table``, its content in pieces of ``size`` bytes (0021
    calls this with a smaller size; this migration's own SQL is the default's)."""
    words = f'"{table}_words"'
    key = f'"{table}_search_key"'
    index = f'"{table}_search"'
    # Field by field: the rows to delete must be exactly the rows indexed.
    fields_changed = " OR ".join(f"old.{f} IS NOT new.{f}" for f in fields)
    changed = (
        f" AND (n.i = 0 AND ({fields_changed}) OR {piece('old.', size)} IS NOT "
        f"{piece('new.', size)})"
    )
    # 0011's trigram rows: (head lowercased, opening lowercased, opening as written).
    opening = "substr(coalesce(new.content,''),1,20000)"
    trigram_values = f"lower({head('new.', fields)}), lower({opening}), {opening}"
    forward = [
        f"CREATE TABLE IF NOT EXISTS {NUMBERS} (i integer NOT NULL PRIMARY KEY)",
        f"INSERT OR IGNORE INTO {NUMBERS} (i) SELECT a.column1 * 64 + b.column1 "
        f"FROM ({SIXTY_FOUR}) a, ({SIXTY_FOUR}) b",
        f"CREATE VIRTUAL TABLE {words} USING fts5(title, description, body, content='', "
        "tokenize='porter unicode61 remove_diacritics 2')",
        rows(table, fields, "t.", delete=False, size=size),
        f'DROP TRIGGER IF EXISTS "{table}_search_insert"',
        f'DROP TRIGGER IF EXISTS "{table}_search_delete"',
        f'CREATE TRIGGER "{table}_search_insert" AFTER INSERT ON "{table}" BEGIN '
        f"INSERT INTO {key} (id) VALUES (new.id); "
        f"INSERT INTO {index} (rowid, head, opening, raw) "
        f"VALUES ((SELECT key FROM {key} WHERE id = new.id), {trigram_values}); "
        f"{rows(table, fields, 'new.', delete=False, size=size)}; "
        "END",
        f'CREATE TRIGGER "{table}_words_update" AFTER UPDATE OF {", ".join(fields)}, content '
        f'ON "{table}" WHEN {fields_changed} '
        "OR old.content IS NOT new.content BEGIN "
        f"{rows(table, fields, 'old.', delete=True, where=changed, size=size)}; "
        f"{rows(table, fields, 'new.', delete=False, where=changed, size=size)}; "
        "END",
        f'CREATE TRIGGER "{table}_search_delete" AFTER DELETE ON "{table}" BEGIN '
        f"{rows(table, fields, 'old.', delete=True, size=size)}; "
        f"DELETE FROM {index} WHERE rowid = (SELECT key FROM {key} WHERE id = old.id); "
        f"DELETE FROM {key} WHERE id = old.id; "
        "END",
    ]
    backward = [
        f'DROP TRIGGER IF EXISTS "{table}_words_update"',
        f'DROP TRIGGER IF EXISTS "{table}_search_insert"',
        f'DROP TRIGGER IF EXISTS "{table}_search_delete"',
        f"DROP TABLE IF EXISTS {words}",
        # 0011's own insert and delete triggers, as it made them.
        f'CREATE TRIGGER "{table}_search_insert" AFTER INSERT ON "{table}" BEGIN '
        f"INSERT INTO {key} (id) VALUES (new.id); "
        f"INSERT INTO {index} (rowid, head, opening, raw) "
        f"VALUES ((SELECT key FROM {key} WHERE id = new.id), {trigram_values}); "
        "END",
        f'CREATE TRIGGER "{table}_search_delete" AFTER DELETE ON "{table}" BEGIN '
        f"DELETE FROM {index} WHERE rowid = (SELECT key FROM {key} WHERE id = old.id); "
        f"DELETE FROM {key} WHERE id = old.id; "
        "END",
    ]
    return forward, backward


class RunSQLiteSQL(migrations.RunSQL):
    """``RunSQL`` on SQLite only (PostgreSQL has its own full-text columns)."""

    def database_forwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            super().database_backwards(app_label, schema_editor, *args)


class Migration(migrations.Migration):
    dependencies = [("content", "0015_search_change_log")]
    operations = [RunSQLiteSQL(*operations(table, fields)) for table, fields in TABLES.items()]
