"""SQLite: the word index holds each content in pieces of 16 KiB instead of 256 KiB (issue 27).

An edit re-tokenises each piece whose bytes changed twice (the contentless FTS5 table forgets a
row only given the text it indexed, then the new text goes in), so smaller pieces make a one-line
edit of a long note cheaper. Each piece still overlaps the next by 256 bytes (a word or short
phrase across a boundary is whole in one piece), rowids are still the item's key x 4 096 + the
piece's number (so the queries are unchanged), and 4 096 pieces of 16 KiB cover 64 MiB of content
(TIDDLY_MAX_CONTENT_CHARS, 10 M characters, is at most 40 MiB).

The SQL below is 0016's (its backward SQL drops the index and triggers, its forward SQL makes
them again and refills the index from the rows) generated with the other piece size, then frozen
here. Prompts keep 256 KiB pieces (a prompt is short). Nothing on PostgreSQL."""

from django.db import migrations


class RunSQLiteSQL(migrations.RunSQL):
    """``RunSQL`` on SQLite only (PostgreSQL has its own full-text columns)."""

    def database_forwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            super().database_backwards(app_label, schema_editor, *args)


NOTE_16K = [
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

NOTE_256K = [
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
    "coalesce(t.description,'') END, substr(CAST(coalesce(t.content,'') AS BLOB), n.i * 262144 + 1, "
    '262400) FROM search_piece_numbers n CROSS JOIN "content_note_search_key" k CROSS JOIN '
    "\"content_note\" t ON t.id = k.id WHERE n.i < max(1, (length(CAST(coalesce(t.content,'') AS "
    "BLOB)) + 262143) / 262144)",
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
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 262144 + 1, 262400) FROM "
    "search_piece_numbers n WHERE n.i < (SELECT max(1, (length(CAST(coalesce(new.content,'') AS "
    "BLOB)) + 262143) / 262144)); END",
    'CREATE TRIGGER "content_note_words_update" AFTER UPDATE OF title, description, content ON '
    '"content_note" WHEN old.title IS NOT new.title OR old.description IS NOT new.description OR '
    'old.content IS NOT new.content BEGIN INSERT INTO "content_note_words" ("content_note_words", '
    "rowid, title, description, body) SELECT 'delete', (SELECT key FROM \"content_note_search_key\" "
    "WHERE id = old.id) * 4096 + n.i, CASE WHEN n.i = 0 THEN coalesce(old.title,'') END, CASE WHEN "
    "n.i = 0 THEN coalesce(old.description,'') END, substr(CAST(coalesce(old.content,'') AS BLOB), "
    "n.i * 262144 + 1, 262400) FROM search_piece_numbers n WHERE n.i < (SELECT max(1, "
    "(length(CAST(coalesce(old.content,'') AS BLOB)) + 262143) / 262144)) AND (n.i = 0 AND (old.title "
    "IS NOT new.title OR old.description IS NOT new.description) OR "
    "substr(CAST(coalesce(old.content,'') AS BLOB), n.i * 262144 + 1, 262400) IS NOT "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 262144 + 1, 262400)); INSERT INTO "
    '"content_note_words" (rowid, title, description, body) SELECT (SELECT key FROM '
    '"content_note_search_key" WHERE id = new.id) * 4096 + n.i, CASE WHEN n.i = 0 THEN '
    "coalesce(new.title,'') END, CASE WHEN n.i = 0 THEN coalesce(new.description,'') END, "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 262144 + 1, 262400) FROM "
    "search_piece_numbers n WHERE n.i < (SELECT max(1, (length(CAST(coalesce(new.content,'') AS "
    "BLOB)) + 262143) / 262144)) AND (n.i = 0 AND (old.title IS NOT new.title OR old.description IS "
    "NOT new.description) OR substr(CAST(coalesce(old.content,'') AS BLOB), n.i * 262144 + 1, 262400) "
    "IS NOT substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 262144 + 1, 262400)); END",
    'CREATE TRIGGER "content_note_search_delete" AFTER DELETE ON "content_note" BEGIN INSERT INTO '
    '"content_note_words" ("content_note_words", rowid, title, description, body) SELECT \'delete\', '
    '(SELECT key FROM "content_note_search_key" WHERE id = old.id) * 4096 + n.i, CASE WHEN n.i = 0 '
    "THEN coalesce(old.title,'') END, CASE WHEN n.i = 0 THEN coalesce(old.description,'') END, "
    "substr(CAST(coalesce(old.content,'') AS BLOB), n.i * 262144 + 1, 262400) FROM "
    "search_piece_numbers n WHERE n.i < (SELECT max(1, (length(CAST(coalesce(old.content,'') AS "
    'BLOB)) + 262143) / 262144)); DELETE FROM "content_note_search" WHERE rowid = (SELECT key FROM '
    '"content_note_search_key" WHERE id = old.id); DELETE FROM "content_note_search_key" WHERE id = '
    "old.id; END",
]

BOOKMARK_16K = [
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

BOOKMARK_256K = [
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
    'n.i * 262144 + 1, 262400) FROM search_piece_numbers n CROSS JOIN "content_bookmark_search_key" k '
    'CROSS JOIN "content_bookmark" t ON t.id = k.id WHERE n.i < max(1, '
    "(length(CAST(coalesce(t.content,'') AS BLOB)) + 262143) / 262144)",
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
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 262144 + 1, 262400) FROM "
    "search_piece_numbers n WHERE n.i < (SELECT max(1, (length(CAST(coalesce(new.content,'') AS "
    "BLOB)) + 262143) / 262144)); END",
    'CREATE TRIGGER "content_bookmark_words_update" AFTER UPDATE OF title, description, url, content '
    'ON "content_bookmark" WHEN old.title IS NOT new.title OR old.description IS NOT new.description '
    "OR old.url IS NOT new.url OR old.content IS NOT new.content BEGIN INSERT INTO "
    '"content_bookmark_words" ("content_bookmark_words", rowid, title, description, body) SELECT '
    "'delete', (SELECT key FROM \"content_bookmark_search_key\" WHERE id = old.id) * 4096 + n.i, CASE "
    "WHEN n.i = 0 THEN coalesce(old.title,'') || char(10) || coalesce(old.url,'') END, CASE WHEN n.i "
    "= 0 THEN coalesce(old.description,'') END, substr(CAST(coalesce(old.content,'') AS BLOB), n.i * "
    "262144 + 1, 262400) FROM search_piece_numbers n WHERE n.i < (SELECT max(1, "
    "(length(CAST(coalesce(old.content,'') AS BLOB)) + 262143) / 262144)) AND (n.i = 0 AND (old.title "
    "IS NOT new.title OR old.description IS NOT new.description OR old.url IS NOT new.url) OR "
    "substr(CAST(coalesce(old.content,'') AS BLOB), n.i * 262144 + 1, 262400) IS NOT "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 262144 + 1, 262400)); INSERT INTO "
    '"content_bookmark_words" (rowid, title, description, body) SELECT (SELECT key FROM '
    '"content_bookmark_search_key" WHERE id = new.id) * 4096 + n.i, CASE WHEN n.i = 0 THEN '
    "coalesce(new.title,'') || char(10) || coalesce(new.url,'') END, CASE WHEN n.i = 0 THEN "
    "coalesce(new.description,'') END, substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 262144 + "
    "1, 262400) FROM search_piece_numbers n WHERE n.i < (SELECT max(1, "
    "(length(CAST(coalesce(new.content,'') AS BLOB)) + 262143) / 262144)) AND (n.i = 0 AND (old.title "
    "IS NOT new.title OR old.description IS NOT new.description OR old.url IS NOT new.url) OR "
    "substr(CAST(coalesce(old.content,'') AS BLOB), n.i * 262144 + 1, 262400) IS NOT "
    "substr(CAST(coalesce(new.content,'') AS BLOB), n.i * 262144 + 1, 262400)); END",
    'CREATE TRIGGER "content_bookmark_search_delete" AFTER DELETE ON "content_bookmark" BEGIN INSERT '
    'INTO "content_bookmark_words" ("content_bookmark_words", rowid, title, description, body) SELECT '
    "'delete', (SELECT key FROM \"content_bookmark_search_key\" WHERE id = old.id) * 4096 + n.i, CASE "
    "WHEN n.i = 0 THEN coalesce(old.title,'') || char(10) || coalesce(old.url,'') END, CASE WHEN n.i "
    "= 0 THEN coalesce(old.description,'') END, substr(CAST(coalesce(old.content,'') AS BLOB), n.i * "
    "262144 + 1, 262400) FROM search_piece_numbers n WHERE n.i < (SELECT max(1, "
    "(length(CAST(coalesce(old.content,'') AS BLOB)) + 262143) / 262144)); DELETE FROM "
    '"content_bookmark_search" WHERE rowid = (SELECT key FROM "content_bookmark_search_key" WHERE id '
    '= old.id); DELETE FROM "content_bookmark_search_key" WHERE id = old.id; END',
]


class Migration(migrations.Migration):
    dependencies = [("content", "0020_sqlite_trigram_positions")]
    operations = [
        RunSQLiteSQL(NOTE_16K, NOTE_256K),
        RunSQLiteSQL(BOOKMARK_16K, BOOKMARK_256K),
    ]
