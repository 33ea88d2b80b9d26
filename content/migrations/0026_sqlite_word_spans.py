"""SQLite: each word piece's place is kept, so a piece is dropped by its row whoever cut it.

0021 cut a content at fixed byte offsets (16 KiB, overlapping by 256). An edit that changes the
content's length moves every later piece, and the contentless FTS5 table forgets a row only given
the text it indexed: a one-line edit near the top of a 100 000-line note re-tokenised the whole
note twice. Now ``"{table}_word_spans"`` records each body piece's byte start and length (and,
when the application cut it, a hash of its text), so:

- the application (``content.search.pieces``) cuts a long content where its own lines say and
  keeps every piece whose text it already holds, writing only the new ones; it names the row in
  ``"{table}_words_written"`` for the length of its save, and the trigger leaves that row's body;
- every other writer goes through the trigger: an edit that keeps the length re-tokenises only
  the pieces whose bytes changed, any other replaces the pieces with 0021's 16 KiB ones.

The title and description (and a bookmark's URL) get a row of their own, the piece numbered 0,
kept by a trigger of their own; the body pieces are numbered from 1. Rowids stay the item's key
x 4 096 + the piece's number, so the queries are unchanged. The index is rebuilt from the rows.
The SQL is generated below from these constants and frozen with this file; nothing on PostgreSQL.
"""

from django.db import migrations

STRIDE = 16384  # the trigger's pieces: 0021's size and overlap
WIDTH = 16640
PIECES = 4096


class RunSQLiteSQL(migrations.RunSQL):
    """``RunSQL`` on SQLite only (PostgreSQL has its own full-text columns)."""

    def database_forwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            super().database_backwards(app_label, schema_editor, *args)


def forwards(table: str, head: str, watched: str, search_head: str) -> list[str]:
    """``head``: the title column's expression over ``{row}``; ``watched``: the head's columns;
    ``search_head``: the trigram index's head (0016's, unchanged)."""
    words, spans, written = f'"{table}_words"', f'"{table}_word_spans"', f'"{table}_words_written"'
    key = f'(SELECT key FROM "{table}_search_key" WHERE id = {{row}}.id)'

    def blob(row: str) -> str:
        return f"CAST(coalesce({row}.content,'') AS BLOB)"

    def head_of(row: str) -> str:
        return f"{head.format(row=row)}, coalesce({row}.description,'')"

    def cut(row: str, base: str) -> list[str]:
        """0021's pieces of ``row``'s content, numbered from 1, and their places."""
        count = f"min({PIECES - 1}, (length({blob(row)}) + {STRIDE - 1}) / {STRIDE})"
        return [
            f"INSERT INTO {words} (rowid, body) SELECT {base} + n.i + 1, substr({blob(row)}, "
            f"n.i * {STRIDE} + 1, {WIDTH}) FROM search_piece_numbers n WHERE n.i < {count}",
            f"INSERT INTO {spans} (rowid, start, length) SELECT {base} + n.i + 1, n.i * {STRIDE} "
            f"+ 1, min({WIDTH}, length({blob(row)}) - n.i * {STRIDE}) FROM search_piece_numbers n "
            f"WHERE n.i < {count}",
        ]

    def forget_body(row: str, base: str, where: str = "") -> str:
        return (
            f"INSERT INTO {words} ({words}, rowid, body) SELECT 'delete', s.rowid, "
            f"substr({blob(row)}, s.start, s.length) FROM {spans} s WHERE s.rowid > {base} AND "
            f"s.rowid < {base} + {PIECES}{where}"
        )

    new_key, old_key = key.format(row="new"), key.format(row="old")
    new_base, old_base = f"{new_key} * {PIECES}", f"{old_key} * {PIECES}"
    same = f"length({blob('old')}) = length({blob('new')})"
    changed = (
        f"substr({blob('old')}, s.start, s.length) IS NOT substr({blob('new')}, s.start, s.length)"
    )
    heads = " OR ".join(f"old.{c} IS NOT new.{c}" for c in watched.split(", "))
    search_insert = (
        f'INSERT INTO "{table}_search_key" (id) VALUES (new.id); '
        f'INSERT INTO "{table}_search" (rowid, head, opening, raw) VALUES ({new_key}, '
        f"lower({search_head}), "
        f"lower(substr(coalesce(new.content,''),1,20000)), substr(coalesce(new.content,''),1,20000))"
    )
    return [
        f'DROP TRIGGER IF EXISTS "{table}_words_update"',
        f'DROP TRIGGER IF EXISTS "{table}_search_insert"',
        f'DROP TRIGGER IF EXISTS "{table}_search_delete"',
        f"DROP TABLE IF EXISTS {words}",
        f"CREATE TABLE {spans} (rowid integer NOT NULL PRIMARY KEY, start integer NOT NULL, "
        "length integer NOT NULL, hash blob NULL)",
        f"CREATE TABLE {written} (id char(32) NOT NULL PRIMARY KEY)",
        f"CREATE VIRTUAL TABLE {words} USING fts5(title, description, body, content='', "
        "tokenize='porter unicode61 remove_diacritics 2')",
        f"INSERT INTO {words} (rowid, title, description) SELECT k.key * {PIECES}, "
        f'{head_of("t")} FROM "{table}_search_key" k CROSS JOIN "{table}" t ON t.id = k.id',
        f"INSERT INTO {words} (rowid, body) SELECT k.key * {PIECES} + n.i + 1, "
        f"substr({blob('t')}, n.i * {STRIDE} + 1, {WIDTH}) FROM search_piece_numbers n CROSS JOIN "
        f'"{table}_search_key" k CROSS JOIN "{table}" t ON t.id = k.id WHERE n.i < '
        f"min({PIECES - 1}, (length({blob('t')}) + {STRIDE - 1}) / {STRIDE})",
        f"INSERT INTO {spans} (rowid, start, length) SELECT k.key * {PIECES} + n.i + 1, "
        f"n.i * {STRIDE} + 1, min({WIDTH}, length({blob('t')}) - n.i * {STRIDE}) FROM "
        f'search_piece_numbers n CROSS JOIN "{table}_search_key" k CROSS JOIN "{table}" t ON '
        f"t.id = k.id WHERE n.i < min({PIECES - 1}, (length({blob('t')}) + {STRIDE - 1}) / "
        f"{STRIDE})",
        # A row being created is named by '*' while the application saves it.
        f'CREATE TRIGGER "{table}_search_insert" AFTER INSERT ON "{table}" BEGIN '
        f"{search_insert}; "
        f"INSERT INTO {words} (rowid, title, description) VALUES ({new_base}, {head_of('new')}); "
        + "; ".join(
            s.replace(
                " WHERE n.i <",
                f" WHERE NOT EXISTS (SELECT 1 FROM {written} WHERE id IN ('*', new.id)) AND n.i <",
            )
            for s in cut("new", new_base)
        )
        + "; END",
        f'CREATE TRIGGER "{table}_words_head" AFTER UPDATE OF {watched} ON "{table}" WHEN '
        f"{heads} BEGIN "
        f"INSERT INTO {words} ({words}, rowid, title, description) VALUES ('delete', {old_base}, "
        f"{head_of('old')}); "
        f"INSERT INTO {words} (rowid, title, description) VALUES ({new_base}, {head_of('new')}); "
        "END",
        f'CREATE TRIGGER "{table}_words_body" AFTER UPDATE OF content ON "{table}" WHEN '
        f"old.content IS NOT new.content AND NOT EXISTS (SELECT 1 FROM {written} WHERE id = "
        f"new.id) BEGIN "
        # The same length: the places still cover the content; re-tokenise the changed pieces.
        f"{forget_body('old', old_base, f' AND (NOT {same} OR {changed})')}; "
        f"INSERT INTO {words} (rowid, body) SELECT s.rowid, substr({blob('new')}, s.start, "
        f"s.length) FROM {spans} s WHERE s.rowid > {old_base} AND s.rowid < {old_base} + "
        f"{PIECES} AND {same} AND {changed}; "
        f"UPDATE {spans} SET hash = NULL WHERE rowid > {old_base} AND rowid < {old_base} + "
        f"{PIECES} AND {same} AND hash IS NOT NULL AND "
        f"substr({blob('old')}, start, length) IS NOT substr({blob('new')}, start, length); "
        # Another length: 0021's pieces instead.
        f"DELETE FROM {spans} WHERE rowid > {old_base} AND rowid < {old_base} + {PIECES} AND "
        f"NOT {same}; "
        + "; ".join(
            s.replace(" WHERE n.i <", f" WHERE NOT {same} AND n.i <") for s in cut("new", new_base)
        )
        + "; END",
        f'CREATE TRIGGER "{table}_search_delete" AFTER DELETE ON "{table}" BEGIN '
        f"INSERT INTO {words} ({words}, rowid, title, description) VALUES ('delete', {old_base}, "
        f"{head_of('old')}); "
        f"{forget_body('old', old_base)}; "
        f"DELETE FROM {spans} WHERE rowid > {old_base} AND rowid < {old_base} + {PIECES}; "
        f'DELETE FROM "{table}_search" WHERE rowid = {old_key}; '
        f'DELETE FROM "{table}_search_key" WHERE id = old.id; END',
    ]


NOTE = forwards(
    "content_note",
    "coalesce({row}.title,'')",
    "title, description",
    "coalesce(new.title,'') || char(10) || coalesce(new.description,'')",
)
BOOKMARK = forwards(
    "content_bookmark",
    "coalesce({row}.title,'') || char(10) || coalesce({row}.url,'')",
    "title, description, url",
    "coalesce(new.title,'') || char(10) || coalesce(new.description,'') || char(10) || "
    "coalesce(new.url,'')",
)


def backwards(table: str) -> list[str]:
    """Drop what ``forwards`` made; 0021's SQL (below) then makes its index again."""
    return [
        f'DROP TRIGGER IF EXISTS "{table}_words_head"',
        f'DROP TRIGGER IF EXISTS "{table}_words_body"',
        f'DROP TABLE IF EXISTS "{table}_word_spans"',
        f'DROP TABLE IF EXISTS "{table}_words_written"',
    ]


# 0021's forward SQL, frozen here.
NOTE_0021 = [
    'DROP TRIGGER IF EXISTS "content_note_words_update"',
    'DROP TRIGGER IF EXISTS "content_note_search_insert"',
    'DROP TRIGGER IF EXISTS "content_note_search_delete"',
    'DROP TABLE IF EXISTS "content_note_words"',
    'CREATE TRIGGER "content_note_search_insert" AFTER INSERT ON "content_note" BEGIN INSERT INTO '
    '"content_note_search_key" (id) VALUES (new.id); INSERT INTO "content_note_search" (rowid, head, '
    'opening, raw) VALUES ((SELECT key FROM "content_note_search_key" WHERE id = new.id), '
    "lower(coalesce(new.title,'') || char(10) || coalesce(new.description,'')), "
    "lower(substr(coalesce(new.content,''),1,20000)), substr(coalesce(new.content,''),1,20000)); END",
    'CREATE TRIGGER "content_note_search_delete" AFTER DELETE ON "content_note" BEGIN DELETE FROM '
    '"content_note_search" WHERE rowid = (SELECT key FROM "content_note_search_key" WHERE id = '
    'old.id); DELETE FROM "content_note_search_key" WHERE id = old.id; END',
    "CREATE TABLE IF NOT EXISTS search_piece_numbers (i integer NOT NULL PRIMARY KEY)",
    "INSERT OR IGNORE INTO search_piece_numbers (i) SELECT a.column1 * 64 + b.column1 FROM (VALUES "
    "(0),(1),(2),(3),(4),(5),(6),(7),(8),(9),(10),(11),(12),(13),(14),(15),(16),(17),(18),(19),(20),(21),(22),(23),(24),(25),(26),(27),(28),(29),(30),(31),(32),(33),(34),(35),(36),(37),(38),(39),(40),(41),(42),(43),(44),(45),(46),(47),(48),(49),(50),(51),(52),(53),(54),(55),(56),(57),(58),(59),(60),(61),(62),(63)) "
    "a, (VALUES "
    "(0),(1),(2),(3),(4),(5),(6),(7),(8),(9),(10),(11),(12),(13),(14),(15),(16),(17),(18),(19),(20),(21),(22),(23),(24),(25),(26),(27),(28),(29),(30),(31),(32),(33),(34),(35),(36),(37),(38),(39),(40),(41),(42),(43),(44),(45),(46),(47),(48),(49),(50),(51),(52),(53),(54),(55),(56),(57),(58),(59),(60),(61),(62),(63)) "
    "b",
    "CREATE VIRTUAL TABLE \"content_note_words\" USING fts5(title, description, body, content='', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    'INSERT INTO "content_note_words" (rowid, title, description, body) SELECT k.key * 4096 + n.i, '
    "CASE WHEN n.i = 0 THEN coalesce(t.title,'') END, CASE WHEN n.i = 0 THEN "
    "coalesce(t.description,'') END, substr(CAST(coalesce(t.content,'') AS BLOB), n.i * 16384 + 1, "
    '16640) FROM search_piece_numbers n CROSS JOIN "content_note_search_key" k CROSS JOIN '
    "\"content_note\" t ON t.id = k.id WHERE n.i < max(1, (length(CAST(coalesce(t.content,'') AS "
    "BLOB)) + 16383) / 16384)",
    'DROP TRIGGER IF EXISTS "content_note_search_insert"',
    'DROP TRIGGER IF EXISTS "content_note_search_delete"',
    'CREATE TRIGGER "content_note_search_insert" AFTER INSERT ON "content_note" BEGIN INSERT INTO '
    '"content_note_search_key" (id) VALUES (new.id); INSERT INTO "content_note_search" (rowid, head, '
    'opening, raw) VALUES ((SELECT key FROM "content_note_search_key" WHERE id = new.id), '
    "lower(coalesce(new.title,'') || char(10) || coalesce(new.description,'')), "
    "lower(substr(coalesce(new.content,''),1,20000)), substr(coalesce(new.content,''),1,20000)); "
    'INSERT INTO "content_note_words" (rowid, title, description, body) SELECT (SELECT key FROM '
    '"content_note_search_key" WHERE id = new.id) * 4096 + n.i, CASE WHEN n.i = 0 THEN '
    "coalesce(new.title,'') END, CASE WHEN n.i = 0 THEN coalesce(new.description,'') END, "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 16384 + 1, 16640) FROM search_piece_numbers "
    "n WHERE n.i < (SELECT max(1, (length(CAST(coalesce(new.content,'') AS BLOB)) + 16383) / 16384)); "
    "END",
    'CREATE TRIGGER "content_note_words_update" AFTER UPDATE OF title, description, content ON '
    '"content_note" WHEN old.title IS NOT new.title OR old.description IS NOT new.description OR '
    'old.content IS NOT new.content BEGIN INSERT INTO "content_note_words" ("content_note_words", '
    "rowid, title, description, body) SELECT 'delete', (SELECT key FROM \"content_note_search_key\" "
    "WHERE id = old.id) * 4096 + n.i, CASE WHEN n.i = 0 THEN coalesce(old.title,'') END, CASE WHEN "
    "n.i = 0 THEN coalesce(old.description,'') END, substr(CAST(coalesce(old.content,'') AS BLOB), "
    "n.i * 16384 + 1, 16640) FROM search_piece_numbers n WHERE n.i < (SELECT max(1, "
    "(length(CAST(coalesce(old.content,'') AS BLOB)) + 16383) / 16384)) AND (n.i = 0 AND (old.title "
    "IS NOT new.title OR old.description IS NOT new.description) OR "
    "substr(CAST(coalesce(old.content,'') AS BLOB), n.i * 16384 + 1, 16640) IS NOT "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 16384 + 1, 16640)); INSERT INTO "
    '"content_note_words" (rowid, title, description, body) SELECT (SELECT key FROM '
    '"content_note_search_key" WHERE id = new.id) * 4096 + n.i, CASE WHEN n.i = 0 THEN '
    "coalesce(new.title,'') END, CASE WHEN n.i = 0 THEN coalesce(new.description,'') END, "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 16384 + 1, 16640) FROM search_piece_numbers "
    "n WHERE n.i < (SELECT max(1, (length(CAST(coalesce(new.content,'') AS BLOB)) + 16383) / 16384)) "
    "AND (n.i = 0 AND (old.title IS NOT new.title OR old.description IS NOT new.description) OR "
    "substr(CAST(coalesce(old.content,'') AS BLOB), n.i * 16384 + 1, 16640) IS NOT "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 16384 + 1, 16640)); END",
    'CREATE TRIGGER "content_note_search_delete" AFTER DELETE ON "content_note" BEGIN INSERT INTO '
    '"content_note_words" ("content_note_words", rowid, title, description, body) SELECT \'delete\', '
    '(SELECT key FROM "content_note_search_key" WHERE id = old.id) * 4096 + n.i, CASE WHEN n.i = 0 '
    "THEN coalesce(old.title,'') END, CASE WHEN n.i = 0 THEN coalesce(old.description,'') END, "
    "substr(CAST(coalesce(old.content,'') AS BLOB), n.i * 16384 + 1, 16640) FROM search_piece_numbers "
    "n WHERE n.i < (SELECT max(1, (length(CAST(coalesce(old.content,'') AS BLOB)) + 16383) / 16384)); "
    'DELETE FROM "content_note_search" WHERE rowid = (SELECT key FROM "content_note_search_key" WHERE '
    'id = old.id); DELETE FROM "content_note_search_key" WHERE id = old.id; END',
]

BOOKMARK_0021 = [
    'DROP TRIGGER IF EXISTS "content_bookmark_words_update"',
    'DROP TRIGGER IF EXISTS "content_bookmark_search_insert"',
    'DROP TRIGGER IF EXISTS "content_bookmark_search_delete"',
    'DROP TABLE IF EXISTS "content_bookmark_words"',
    'CREATE TRIGGER "content_bookmark_search_insert" AFTER INSERT ON "content_bookmark" BEGIN INSERT '
    'INTO "content_bookmark_search_key" (id) VALUES (new.id); INSERT INTO "content_bookmark_search" '
    '(rowid, head, opening, raw) VALUES ((SELECT key FROM "content_bookmark_search_key" WHERE id = '
    "new.id), lower(coalesce(new.title,'') || char(10) || coalesce(new.description,'') || char(10) || "
    "coalesce(new.url,'')), lower(substr(coalesce(new.content,''),1,20000)), "
    "substr(coalesce(new.content,''),1,20000)); END",
    'CREATE TRIGGER "content_bookmark_search_delete" AFTER DELETE ON "content_bookmark" BEGIN DELETE '
    'FROM "content_bookmark_search" WHERE rowid = (SELECT key FROM "content_bookmark_search_key" '
    'WHERE id = old.id); DELETE FROM "content_bookmark_search_key" WHERE id = old.id; END',
    "CREATE TABLE IF NOT EXISTS search_piece_numbers (i integer NOT NULL PRIMARY KEY)",
    "INSERT OR IGNORE INTO search_piece_numbers (i) SELECT a.column1 * 64 + b.column1 FROM (VALUES "
    "(0),(1),(2),(3),(4),(5),(6),(7),(8),(9),(10),(11),(12),(13),(14),(15),(16),(17),(18),(19),(20),(21),(22),(23),(24),(25),(26),(27),(28),(29),(30),(31),(32),(33),(34),(35),(36),(37),(38),(39),(40),(41),(42),(43),(44),(45),(46),(47),(48),(49),(50),(51),(52),(53),(54),(55),(56),(57),(58),(59),(60),(61),(62),(63)) "
    "a, (VALUES "
    "(0),(1),(2),(3),(4),(5),(6),(7),(8),(9),(10),(11),(12),(13),(14),(15),(16),(17),(18),(19),(20),(21),(22),(23),(24),(25),(26),(27),(28),(29),(30),(31),(32),(33),(34),(35),(36),(37),(38),(39),(40),(41),(42),(43),(44),(45),(46),(47),(48),(49),(50),(51),(52),(53),(54),(55),(56),(57),(58),(59),(60),(61),(62),(63)) "
    "b",
    "CREATE VIRTUAL TABLE \"content_bookmark_words\" USING fts5(title, description, body, content='', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    'INSERT INTO "content_bookmark_words" (rowid, title, description, body) SELECT k.key * 4096 + '
    "n.i, CASE WHEN n.i = 0 THEN coalesce(t.title,'') || char(10) || coalesce(t.url,'') END, CASE "
    "WHEN n.i = 0 THEN coalesce(t.description,'') END, substr(CAST(coalesce(t.content,'') AS BLOB), "
    'n.i * 16384 + 1, 16640) FROM search_piece_numbers n CROSS JOIN "content_bookmark_search_key" k '
    'CROSS JOIN "content_bookmark" t ON t.id = k.id WHERE n.i < max(1, '
    "(length(CAST(coalesce(t.content,'') AS BLOB)) + 16383) / 16384)",
    'DROP TRIGGER IF EXISTS "content_bookmark_search_insert"',
    'DROP TRIGGER IF EXISTS "content_bookmark_search_delete"',
    'CREATE TRIGGER "content_bookmark_search_insert" AFTER INSERT ON "content_bookmark" BEGIN INSERT '
    'INTO "content_bookmark_search_key" (id) VALUES (new.id); INSERT INTO "content_bookmark_search" '
    '(rowid, head, opening, raw) VALUES ((SELECT key FROM "content_bookmark_search_key" WHERE id = '
    "new.id), lower(coalesce(new.title,'') || char(10) || coalesce(new.description,'') || char(10) || "
    "coalesce(new.url,'')), lower(substr(coalesce(new.content,''),1,20000)), "
    "substr(coalesce(new.content,''),1,20000)); INSERT INTO \"content_bookmark_words\" (rowid, title, "
    'description, body) SELECT (SELECT key FROM "content_bookmark_search_key" WHERE id = new.id) * '
    "4096 + n.i, CASE WHEN n.i = 0 THEN coalesce(new.title,'') || char(10) || coalesce(new.url,'') "
    "END, CASE WHEN n.i = 0 THEN coalesce(new.description,'') END, "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 16384 + 1, 16640) FROM search_piece_numbers "
    "n WHERE n.i < (SELECT max(1, (length(CAST(coalesce(new.content,'') AS BLOB)) + 16383) / 16384)); "
    "END",
    'CREATE TRIGGER "content_bookmark_words_update" AFTER UPDATE OF title, description, url, content '
    'ON "content_bookmark" WHEN old.title IS NOT new.title OR old.description IS NOT new.description '
    "OR old.url IS NOT new.url OR old.content IS NOT new.content BEGIN INSERT INTO "
    '"content_bookmark_words" ("content_bookmark_words", rowid, title, description, body) SELECT '
    "'delete', (SELECT key FROM \"content_bookmark_search_key\" WHERE id = old.id) * 4096 + n.i, CASE "
    "WHEN n.i = 0 THEN coalesce(old.title,'') || char(10) || coalesce(old.url,'') END, CASE WHEN n.i "
    "= 0 THEN coalesce(old.description,'') END, substr(CAST(coalesce(old.content,'') AS BLOB), n.i * "
    "16384 + 1, 16640) FROM search_piece_numbers n WHERE n.i < (SELECT max(1, "
    "(length(CAST(coalesce(old.content,'') AS BLOB)) + 16383) / 16384)) AND (n.i = 0 AND (old.title "
    "IS NOT new.title OR old.description IS NOT new.description OR old.url IS NOT new.url) OR "
    "substr(CAST(coalesce(old.content,'') AS BLOB), n.i * 16384 + 1, 16640) IS NOT "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 16384 + 1, 16640)); INSERT INTO "
    '"content_bookmark_words" (rowid, title, description, body) SELECT (SELECT key FROM '
    '"content_bookmark_search_key" WHERE id = new.id) * 4096 + n.i, CASE WHEN n.i = 0 THEN '
    "coalesce(new.title,'') || char(10) || coalesce(new.url,'') END, CASE WHEN n.i = 0 THEN "
    "coalesce(new.description,'') END, substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 16384 + "
    "1, 16640) FROM search_piece_numbers n WHERE n.i < (SELECT max(1, "
    "(length(CAST(coalesce(new.content,'') AS BLOB)) + 16383) / 16384)) AND (n.i = 0 AND (old.title "
    "IS NOT new.title OR old.description IS NOT new.description OR old.url IS NOT new.url) OR "
    "substr(CAST(coalesce(old.content,'') AS BLOB), n.i * 16384 + 1, 16640) IS NOT "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 16384 + 1, 16640)); END",
    'CREATE TRIGGER "content_bookmark_search_delete" AFTER DELETE ON "content_bookmark" BEGIN INSERT '
    'INTO "content_bookmark_words" ("content_bookmark_words", rowid, title, description, body) SELECT '
    "'delete', (SELECT key FROM \"content_bookmark_search_key\" WHERE id = old.id) * 4096 + n.i, CASE "
    "WHEN n.i = 0 THEN coalesce(old.title,'') || char(10) || coalesce(old.url,'') END, CASE WHEN n.i "
    "= 0 THEN coalesce(old.description,'') END, substr(CAST(coalesce(old.content,'') AS BLOB), n.i * "
    "16384 + 1, 16640) FROM search_piece_numbers n WHERE n.i < (SELECT max(1, "
    "(length(CAST(coalesce(old.content,'') AS BLOB)) + 16383) / 16384)); DELETE FROM "
    '"content_bookmark_search" WHERE rowid = (SELECT key FROM "content_bookmark_search_key" WHERE id '
    '= old.id); DELETE FROM "content_bookmark_search_key" WHERE id = old.id; END',
]


class Migration(migrations.Migration):
    dependencies = [("content", "0025_postgres_pieces_written_by_the_app")]
    operations = [
        RunSQLiteSQL(NOTE, backwards("content_note") + NOTE_0021),
        RunSQLiteSQL(BOOKMARK, backwards("content_bookmark") + BOOKMARK_0021),
    ]
