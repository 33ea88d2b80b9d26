"""PostgreSQL: a long content's word pieces are blocks of 100 lines, not 500 (issue 27).

An edit re-tokenises the blocks it touched while it holds the item's row lock, so concurrent
edits of one note waited for 500 lines' tokenising each; with 100 lines a one-line edit
tokenises a fifth of that (bench/README.md, the fifteenth session: 10 000-line edits 1.07-1.13x
at c=1 and c=8, creates and keyword search within noise). ``tiddly_word_pieces`` is 0023's
one-pass function with the new block size, and every long content's pieces (notes, bookmarks,
prompts) are cut again here, so existing items need no manual step. ``content.search.pieces``
cuts the same blocks in Python. The SQL is frozen here; nothing on SQLite."""

from django.db import migrations

OPENING = 100_000
PART = 100_000
OVERLAP = 200
CONFIG = "tiddly_english"


def one_pass(lines: int) -> str:
    return f"""
CREATE OR REPLACE FUNCTION tiddly_word_pieces(content text)
RETURNS TABLE (block integer, part integer, body text)
LANGUAGE sql IMMUTABLE AS $f$
  WITH blocks AS (
    SELECT ((l.n - 1) / {lines})::integer AS block,
           string_agg(l.line, E'\\n' ORDER BY l.n) AS t
    FROM string_to_table(content, E'\\n') WITH ORDINALITY AS l(line, n)
    WHERE length(content) > {OPENING}
    GROUP BY 1
  )
  SELECT block, p, substr(t, p * {PART} + 1, {PART + OVERLAP})
  FROM blocks, generate_series(0, greatest(length(t) - 1, 0) / {PART}) AS p
$f$;
"""


def cut_again(table: str, hashed: bool) -> str:
    """Every long content's pieces of ``table`` cut by the function as it now stands."""
    words = f'"{table}_words"'
    columns = "item_id, block, part, vector" + (", body_hash" if hashed else "")
    values = f"t.id, p.block, p.part, to_tsvector('{CONFIG}'::regconfig, p.body)" + (
        ", md5(p.body)" if hashed else ""
    )
    return f"""
DELETE FROM {words};
INSERT INTO {words} ({columns})
SELECT {values}
FROM "{table}" t CROSS JOIN LATERAL tiddly_word_pieces(t.content) p
WHERE length(t.content) > {OPENING};
"""


TABLES = {"content_note": True, "content_bookmark": True, "prompts_prompt": False}


def blocks_of(lines: int) -> str:
    return one_pass(lines) + "".join(cut_again(t, hashed) for t, hashed in TABLES.items())


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
        ("content", "0027_sqlite_fewer_merges"),
        # prompts 0007 defines the same function: this one must come last.
        ("prompts", "0009_sqlite_fewer_merges"),
    ]
    operations = [RunPostgresSQL(blocks_of(100), blocks_of(500))]
