"""PostgreSQL: keyword search over WHOLE contents, accents folded (SPEC §3.3 and §16, round 4).
The SQL lives here on purpose (a migration never imports application code);
``prompts/migrations/0007_postgres_words.py`` holds the same for prompts.

1. ``tiddly_english``: the ``english`` text search configuration with ``unaccent`` before the
   stemmer, so "cafe" finds "Café" as SQLite's ``remove_diacritics`` does. The stored vectors
   ``search_vector`` and ``search_head`` are recomputed with it.
2. ``search_vector`` holds a content's first 100 000 characters (a tsvector must stay under
   1 MB and its positions stop at 16 383). A longer content is also kept in ``"{table}_words"``:
   pieces of 500 lines (a piece over 100 000 characters is cut in parts of that size, each
   overlapping the next by 200), one tsvector each with a GIN index — every piece well under
   the 1 MB limit, whatever the content. A trigger keeps them in the write's transaction and
   re-indexes only the pieces whose text changed: a one-line edit of a 100 000-line note
   tokenises 500 lines, not 6 MB (no foreign key: Django's test flush truncates the item
   tables alone; the trigger deletes an item's pieces with it). Why pieces and not one vector of the whole content: that
   vector would exceed 1 MB for a large content of many distinct words (the write would fail)
   and would lose phrase positions past 16 383 words.
"""

from django.db import migrations

CONFIG = "tiddly_english"
OPENING = 100_000  # characters of a content that search_vector holds
LINES = 500
PART = 100_000
OVERLAP = 200
TABLES = {"content_note": None, "content_bookmark": "url"}

SETUP = f"""
CREATE EXTENSION IF NOT EXISTS unaccent;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = '{CONFIG}') THEN
    CREATE TEXT SEARCH CONFIGURATION {CONFIG} (COPY = english);
    ALTER TEXT SEARCH CONFIGURATION {CONFIG}
      ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;
  END IF;
END $$;
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


def vectors(table: str, extra: str | None) -> tuple[str, str]:
    title = "coalesce(title, '')" + (f" || ' ' || coalesce({extra}, '')" if extra else "")

    def sql(config: str) -> str:
        head = (
            f"setweight(to_tsvector('{config}'::regconfig, {title}), 'A') || "
            f"setweight(to_tsvector('{config}'::regconfig, coalesce(description, '')), 'B')"
        )
        full = (
            f"{head} || setweight(to_tsvector('{config}'::regconfig, "
            f"left(coalesce(content, ''), {OPENING})), 'C')"
        )
        return (
            f'DROP INDEX IF EXISTS "{table}_search_vector"; '
            f'DROP INDEX IF EXISTS "{table}_search_head"; '
            f'ALTER TABLE "{table}" DROP COLUMN search_vector, DROP COLUMN search_head; '
            f'ALTER TABLE "{table}" ADD COLUMN search_vector tsvector '
            f"GENERATED ALWAYS AS ({full}) STORED, "
            f"ADD COLUMN search_head tsvector GENERATED ALWAYS AS ({head}) STORED; "
            f'CREATE INDEX "{table}_search_vector" ON "{table}" USING gin (search_vector); '
            f'CREATE INDEX "{table}_search_head" ON "{table}" USING gin (search_head);'
        )

    return sql(CONFIG), sql("english")


def words(table: str) -> tuple[str, str]:
    words = f'"{table}_words"'
    function = f"tiddly_{table}_words"
    forward = f"""
CREATE TABLE {words} (
  item_id uuid NOT NULL,
  block integer NOT NULL,
  part integer NOT NULL,
  vector tsvector NOT NULL,
  PRIMARY KEY (item_id, block, part)
);
CREATE INDEX "{table}_words_vector" ON {words} USING gin (vector);
CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $f$
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
CREATE TRIGGER "{table}_words" AFTER INSERT OR UPDATE OF content OR DELETE ON "{table}"
  FOR EACH ROW EXECUTE FUNCTION {function}();
INSERT INTO {words} (item_id, block, part, vector)
SELECT t.id, p.block, p.part, to_tsvector('{CONFIG}'::regconfig, p.body)
FROM "{table}" t, tiddly_word_pieces(t.content) p WHERE length(t.content) > {OPENING};
"""
    backward = (
        f'DROP TRIGGER IF EXISTS "{table}_words" ON "{table}"; '
        f"DROP FUNCTION IF EXISTS {function}(); DROP TABLE IF EXISTS {words};"
    )
    return forward, backward


class RunPostgresSQL(migrations.RunSQL):
    """``RunSQL`` on PostgreSQL only (SQLite has its own word index, migration 0016)."""

    def database_forwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, *args)


class Migration(migrations.Migration):
    dependencies = [("content", "0016_sqlite_words")]
    operations = [
        RunPostgresSQL(SETUP, migrations.RunSQL.noop),
        *(RunPostgresSQL(*vectors(t, extra)) for t, extra in TABLES.items()),
        *(RunPostgresSQL(*words(t)) for t in TABLES),
    ]
