"""PostgreSQL: a write that already wrote an item's word pieces tells the trigger to leave them.

0023's trigger splits the whole new content into its 500-line pieces and hashes each, in SQL,
on every write of the content: most of the cost of a one-line edit of a long note. The
application holds that content in memory and splits it far faster, so its create, update and
edit paths write the changed pieces themselves (``content.search.pieces``) after setting
``tiddly.pieces_written`` to the item's id for their transaction. The trigger below is 0023's
with one more check: when that setting names the row, it does nothing. Every other write (bulk
updates, raw SQL, imports, reverts through other paths) still goes through the trigger, so the
pieces stay right whoever writes. The SQL is frozen here; nothing on SQLite."""

from django.db import migrations

CONFIG = "tiddly_english"
TABLES = ("content_note", "content_bookmark")
SETTING = "tiddly.pieces_written"


def trigger(table: str, *, skip: bool) -> str:
    words = f'"{table}_words"'
    function = f"tiddly_{table}_words"
    check = (
        f"""
  IF current_setting('{SETTING}', true) = NEW.id::text THEN
    RETURN NULL;
  END IF;"""
        if skip
        else ""
    )
    return f"""
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $f$
DECLARE
  blocks integer[]; parts integer[]; bodies text[]; hashes text[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM {words} WHERE item_id = OLD.id;
    RETURN NULL;
  END IF;{check}
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


class RunPostgresSQL(migrations.RunSQL):
    """``RunSQL`` on PostgreSQL only."""

    def database_forwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, *args)


class Migration(migrations.Migration):
    dependencies = [("content", "0024_postgres_vectors_kept_by_trigger")]
    operations = [
        RunPostgresSQL(trigger(table, skip=True), trigger(table, skip=False)) for table in TABLES
    ]
