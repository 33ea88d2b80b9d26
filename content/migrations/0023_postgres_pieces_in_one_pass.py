"""PostgreSQL: ``tiddly_word_pieces`` cuts a content into its 500-line blocks in one pass (issue 27).

0017's version took each block as a slice of the content's array of lines. An array of text
values is read from its start to reach an element, so the slices cost time quadratic in the
number of lines (seconds for a 100 000-line note; bench/README.md), paid twice by every edit of
it (the new and the old content) and once by its create. Here the lines are numbered as they are split and
aggregated by block: the same blocks, parts and bodies (checked against 0017's on a 100 000-line
note and on contents with long lines, blank lines, CRLF and a trailing newline), in linear time.

The note and bookmark word tables also keep each piece's ``md5``, so an edit splits only the new
content and re-tokenises the pieces whose hash changed, where 0017's trigger split the old
content a second time to compare bodies. A piece without a hash (none after the backfill below)
counts as changed. The SQL is frozen here; it runs after prompts 0007, which defines the same
function, so that the last definition is this one. Nothing on SQLite."""

from django.db import migrations

OPENING = 100_000
LINES = 500
PART = 100_000
OVERLAP = 200

ONE_PASS = f"""
CREATE OR REPLACE FUNCTION tiddly_word_pieces(content text)
RETURNS TABLE (block integer, part integer, body text)
LANGUAGE sql IMMUTABLE AS $f$
  WITH blocks AS (
    SELECT ((l.n - 1) / {LINES})::integer AS block,
           string_agg(l.line, E'\\n' ORDER BY l.n) AS t
    FROM string_to_table(content, E'\\n') WITH ORDINALITY AS l(line, n)
    WHERE length(content) > {OPENING}
    GROUP BY 1
  )
  SELECT block, p, substr(t, p * {PART} + 1, {PART + OVERLAP})
  FROM blocks, generate_series(0, greatest(length(t) - 1, 0) / {PART}) AS p
$f$;
"""

SLICES = f"""
CREATE OR REPLACE FUNCTION tiddly_word_pieces(content text)
RETURNS TABLE (block integer, part integer, body text)
LANGUAGE sql IMMUTABLE AS $f$
  WITH lines AS (
    SELECT string_to_array(content, E'\\n') AS l WHERE length(content) > {OPENING}
  ), blocks AS (
    SELECT b - 1 AS block, array_to_string(l[(b - 1) * {LINES} + 1 : b * {LINES}], E'\\n') AS t
    FROM lines, generate_series(1, (cardinality(l) + {LINES - 1}) / {LINES}) AS b
  )
  SELECT block, p, substr(t, p * {PART} + 1, {PART + OVERLAP})
  FROM blocks, generate_series(0, greatest(length(t) - 1, 0) / {PART}) AS p
$f$;
"""


CONFIG = "tiddly_english"
TABLES = ("content_note", "content_bookmark")


def hashed_pieces(table: str) -> tuple[str, str]:
    words = f'"{table}_words"'
    function = f"tiddly_{table}_words"
    forward = f"""
ALTER TABLE {words} ADD COLUMN body_hash text NULL;
UPDATE {words} w SET body_hash = md5(p.body)
FROM "{table}" t CROSS JOIN LATERAL tiddly_word_pieces(t.content) p
WHERE t.id IN (SELECT DISTINCT item_id FROM {words})
  AND w.item_id = t.id AND w.block = p.block AND w.part = p.part;
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $f$
DECLARE
  blocks integer[]; parts integer[]; bodies text[]; hashes text[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM {words} WHERE item_id = OLD.id;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.content IS NOT DISTINCT FROM OLD.content THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(p.block), array_agg(p.part), array_agg(p.body), array_agg(md5(p.body))
    INTO blocks, parts, bodies, hashes FROM tiddly_word_pieces(NEW.content) p;
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM {words} w WHERE w.item_id = NEW.id AND NOT EXISTS (
      SELECT 1 FROM unnest(blocks, parts) AS n(block, part)
      WHERE n.block = w.block AND n.part = w.part);
  END IF;
  IF blocks IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO {words} (item_id, block, part, vector, body_hash)
  SELECT NEW.id, n.block, n.part, to_tsvector('{CONFIG}'::regconfig, n.body), n.hash
  FROM unnest(blocks, parts, bodies, hashes) AS n(block, part, body, hash)
  LEFT JOIN {words} w ON w.item_id = NEW.id AND w.block = n.block AND w.part = n.part
  WHERE w.body_hash IS DISTINCT FROM n.hash
  ON CONFLICT (item_id, block, part) DO UPDATE
    SET vector = EXCLUDED.vector, body_hash = EXCLUDED.body_hash;
  RETURN NULL;
END $f$;
"""
    backward = f"""
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $f$
DECLARE
  blocks integer[]; parts integer[]; bodies text[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM {words} WHERE item_id = OLD.id;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.content IS NOT DISTINCT FROM OLD.content THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(p.block), array_agg(p.part), array_agg(p.body)
    INTO blocks, parts, bodies FROM tiddly_word_pieces(NEW.content) p;
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM {words} w WHERE w.item_id = NEW.id AND NOT EXISTS (
      SELECT 1 FROM unnest(blocks, parts) AS n(block, part)
      WHERE n.block = w.block AND n.part = w.part);
  END IF;
  IF blocks IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO {words} (item_id, block, part, vector)
  SELECT NEW.id, n.block, n.part, to_tsvector('{CONFIG}'::regconfig, n.body)
  FROM unnest(blocks, parts, bodies) AS n(block, part, body)
  LEFT JOIN tiddly_word_pieces(CASE WHEN TG_OP = 'UPDATE' THEN OLD.content END) o
    ON o.block = n.block AND o.part = n.part
  WHERE o.body IS DISTINCT FROM n.body
  ON CONFLICT (item_id, block, part) DO UPDATE SET vector = EXCLUDED.vector;
  RETURN NULL;
END $f$;
ALTER TABLE {words} DROP COLUMN body_hash;
"""
    return forward, backward


class RunPostgresSQL(migrations.RunSQL):
    """``RunSQL`` on PostgreSQL only."""

    def database_forwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, *args)


class Migration(migrations.Migration):
    dependencies = [
        ("content", "0022_sqlite_opening_test_as_bytes"),
        ("prompts", "0007_postgres_words"),
    ]
    operations = [
        RunPostgresSQL(ONE_PASS, SLICES),
        *(RunPostgresSQL(*hashed_pieces(table)) for table in TABLES),
    ]
