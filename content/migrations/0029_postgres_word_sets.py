"""PostgreSQL: the set of words of every ten word pieces of a long content (issue 27).

Keyword search asks which long items hold a word anywhere in their content. The GIN index of
``"{table}_words"`` answers with every piece that holds it, and a common word is in every piece:
with 0028's 100-line blocks a query word read one row per 100 lines of every long content
(bench/README.md, the sixteenth session). ``"{table}_word_sets"`` holds, for every ten blocks
(1 000 lines), the distinct lexemes of their pieces, as an array under a GIN index (an array
has no size limit; a tsvector has 1 MB): ten times fewer rows, and a word is looked up without
positions. Phrases still need the pieces' positions.

A statement trigger on each words table keeps the sets, so every writer of pieces (the
application, the items' triggers, a migration) keeps them right: the sets of the groups its
statement touched are taken again from the pieces. Existing items get theirs here. The SQL is
frozen here; nothing on SQLite."""

from django.db import migrations

GROUP = 10  # blocks in a set
TABLES = ("content_note", "content_bookmark", "prompts_prompt")


UNION = """
CREATE AGGREGATE tiddly_tsvector_union(tsvector) (
  SFUNC = tsvector_concat, STYPE = tsvector, INITCOND = ''
);
"""


def word_sets(words: str, groups: str) -> str:
    """``(item_id, grp, lexemes)`` for each ``(item_id, grp)`` of ``groups``: the distinct lexemes
    of the group's pieces. Merged as stripped tsvectors (linear, in C) while their sizes add up
    to less than a tsvector may hold (1 MB), else unnested and sorted (no limit)."""
    return f"""
SELECT a.item_id, a.grp, CASE
    WHEN s.size IS NULL THEN '{{}}'::text[]
    WHEN s.size < 1000000 THEN
      (SELECT tsvector_to_array(tiddly_tsvector_union(v)) FROM unnest(s.vs) v)
    ELSE ARRAY(SELECT DISTINCT x FROM unnest(s.vs) v, unnest(tsvector_to_array(v)) x)
  END AS lexemes
FROM ({groups}) a CROSS JOIN LATERAL (
  SELECT array_agg(v) AS vs, sum(pg_column_size(v)) AS size FROM (
    SELECT strip(w.vector) AS v FROM {words} w
    WHERE w.item_id = a.item_id AND w.block >= a.grp * {GROUP} AND w.block < (a.grp + 1) * {GROUP}
  ) z
) s"""


def forwards(table: str) -> str:
    words, sets = f'"{table}_words"', f'"{table}_word_sets"'
    function = f"tiddly_{table}_word_sets"
    touched = f"SELECT DISTINCT item_id, block / {GROUP} AS grp FROM changed"
    everything = f"SELECT DISTINCT item_id, block / {GROUP} AS grp FROM {words}"
    return f"""
CREATE TABLE {sets} (
  item_id uuid NOT NULL,
  grp integer NOT NULL,
  lexemes text[] NOT NULL,
  PRIMARY KEY (item_id, grp)
);
CREATE INDEX "{table}_word_sets_lexemes" ON {sets} USING gin (lexemes);

CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  -- "changed": the statement's new rows (insert, update) or its old ones (delete). A set that
  -- came out the same (most one-line edits) is not written again.
  WITH fresh AS ({word_sets(words, touched)}),
  gone AS (
    DELETE FROM {sets} s USING fresh
    WHERE s.item_id = fresh.item_id AND s.grp = fresh.grp AND cardinality(fresh.lexemes) = 0
  )
  INSERT INTO {sets} AS s (item_id, grp, lexemes)
  SELECT item_id, grp, lexemes FROM fresh WHERE cardinality(lexemes) > 0
  ON CONFLICT (item_id, grp) DO UPDATE SET lexemes = EXCLUDED.lexemes
    WHERE s.lexemes IS DISTINCT FROM EXCLUDED.lexemes;
  RETURN NULL;
END $f$;

CREATE TRIGGER "{table}_word_sets_insert" AFTER INSERT ON {words}
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {function}();
CREATE TRIGGER "{table}_word_sets_update" AFTER UPDATE ON {words}
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {function}();
CREATE TRIGGER "{table}_word_sets_delete" AFTER DELETE ON {words}
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {function}();

INSERT INTO {sets} (item_id, grp, lexemes)
SELECT * FROM ({word_sets(words, everything)}) fresh WHERE cardinality(lexemes) > 0;
"""


def backwards(table: str) -> str:
    return f"""
DROP TABLE "{table}_word_sets";
DROP FUNCTION tiddly_{table}_word_sets() CASCADE;
"""


class RunPostgresSQL(migrations.RunSQL):
    """``RunSQL`` on PostgreSQL only."""

    def database_forwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, *args)


class Migration(migrations.Migration):
    dependencies = [("content", "0028_postgres_blocks_of_100_lines")]
    operations = [
        RunPostgresSQL(UNION, "DROP AGGREGATE tiddly_tsvector_union(tsvector);"),
        *(RunPostgresSQL(forwards(t), backwards(t)) for t in TABLES),
    ]
