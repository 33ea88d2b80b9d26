"""PostgreSQL: the set of words of every ten word pieces of a long content (issue 27).

Keyword search asks which long items hold a word anywhere in their content. The GIN index of
``"{table}_words"`` answers with every piece that holds it, and a common word is in every piece:
with 0028's 100-line blocks, one row a block, SPEC §16's 100 notes of 100 000 lines gave
116 000 rows to read for each query word (hybrid p50 65 -> 112 ms). ``"{table}_word_sets"``
holds, for every ten blocks (1 000 lines), the distinct lexemes of their pieces, as an array
under a GIN index (an array has no size limit; a tsvector has 1 MB): ten times fewer rows, and a
word is looked up without positions. Phrases still need the pieces' positions.

A statement trigger on each words table keeps the sets, so every writer of pieces (the
application, the items' triggers, a migration) keeps them right: the sets of the groups its
statement touched are taken again from the pieces. Existing items get theirs here. The SQL is
frozen here; nothing on SQLite."""

from django.db import migrations

GROUP = 10  # blocks in a set
TABLES = ("content_note", "content_bookmark", "prompts_prompt")


def word_set(words: str) -> str:
    """The distinct lexemes of the pieces of group ``a.grp`` of item ``a.item_id``."""
    return (
        f"ARRAY(SELECT DISTINCT x FROM {words} w, unnest(tsvector_to_array(w.vector)) x "
        f"WHERE w.item_id = a.item_id AND w.block >= a.grp * {GROUP} "
        f"AND w.block < (a.grp + 1) * {GROUP})"
    )


def forwards(table: str) -> str:
    words, sets = f'"{table}_words"', f'"{table}_word_sets"'
    function = f"tiddly_{table}_word_sets"
    touched = f"SELECT DISTINCT item_id, block / {GROUP} AS grp FROM changed"
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
  -- "changed": the statement's new rows (insert, update) or its old ones (delete).
  WITH a AS ({touched}), fresh AS (SELECT a.item_id, a.grp, {word_set(words)} AS lexemes FROM a),
  gone AS (
    DELETE FROM {sets} s USING fresh
    WHERE s.item_id = fresh.item_id AND s.grp = fresh.grp AND cardinality(fresh.lexemes) = 0
  )
  INSERT INTO {sets} (item_id, grp, lexemes)
  SELECT item_id, grp, lexemes FROM fresh WHERE cardinality(lexemes) > 0
  ON CONFLICT (item_id, grp) DO UPDATE SET lexemes = EXCLUDED.lexemes;
  RETURN NULL;
END $f$;

CREATE TRIGGER "{table}_word_sets_insert" AFTER INSERT ON {words}
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {function}();
CREATE TRIGGER "{table}_word_sets_update" AFTER UPDATE ON {words}
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {function}();
CREATE TRIGGER "{table}_word_sets_delete" AFTER DELETE ON {words}
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {function}();

INSERT INTO {sets} (item_id, grp, lexemes)
SELECT * FROM (
  SELECT a.item_id, a.grp, {word_set(words)} AS lexemes
  FROM (SELECT DISTINCT item_id, block / {GROUP} AS grp FROM {words}) a
) fresh WHERE cardinality(lexemes) > 0;
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
    operations = [RunPostgresSQL(forwards(t), backwards(t)) for t in TABLES]
