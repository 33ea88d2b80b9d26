"""PostgreSQL: the search columns of notes and bookmarks are kept by a trigger that recomputes
them only when what they are made of changed (issue 27).

``search_vector``, ``search_head``, ``content_opening`` and ``head_text`` were generated columns:
PostgreSQL recomputed every one of them on every UPDATE of the row (``search_vector`` tokenises
the content's first 100 000 characters), and since their new values are new datums, the row
could never be updated in place (HOT): each edit inserted all their entries into the four GIN
indexes again. An edit past a long note's opening (a str-replace in line 5 000 of 10 000) changes
none of them. Here they become plain columns with the same expressions, set by a BEFORE trigger
when the short fields (head) or the content's first 100 000 characters (opening) changed: such an
edit leaves them as they are and can be a HOT update. The values are the generated columns'
expressions exactly, so nothing is recomputed by this migration. SQL frozen here; nothing on
SQLite (its opening index has had the same rule since content 0019)."""

from django.db import migrations

OPENING = 100_000

# (table, the head's extra field, the head as written in 0012/0017's generated columns)
TABLES = {
    "content_note": {
        "changed": ["title", "description"],
        "search_head": (
            "setweight(to_tsvector('tiddly_english'::regconfig, COALESCE(NEW.title, ''::text)), "
            "'A'::\"char\") || setweight(to_tsvector('tiddly_english'::regconfig, "
            "COALESCE(NEW.description, ''::text)), 'B'::\"char\")"
        ),
        "head_text": "lower(COALESCE(NEW.title, ''::text) || chr(10) || "
        "COALESCE(NEW.description, ''::text))",
    },
    "content_bookmark": {
        "changed": ["title", "description", "url"],
        "search_head": (
            "setweight(to_tsvector('tiddly_english'::regconfig, COALESCE(NEW.title, ''::text) || "
            "' '::text || COALESCE(NEW.url, ''::text)), 'A'::\"char\") || "
            "setweight(to_tsvector('tiddly_english'::regconfig, COALESCE(NEW.description, "
            "''::text)), 'B'::\"char\")"
        ),
        "head_text": "lower(COALESCE(NEW.title, ''::text) || ' '::text || "
        "COALESCE(NEW.url, ''::text) || chr(10) || COALESCE(NEW.description, ''::text))",
    },
}

OPENING_TEXT = f"lower(left(COALESCE(NEW.content, ''::text), {OPENING}))"
CONTENT_VECTOR = (
    "setweight(to_tsvector('tiddly_english'::regconfig, "
    f"left(COALESCE(NEW.content, ''::text), {OPENING})), 'C'::\"char\")"
)
INDEXES = {
    "search_vector": ("search_vector", "tsvector"),
    "search_head": ("search_head", "tsvector"),
    "content_opening": ("content_trgm", "text"),
    "head_text": ("head_text", "text"),
}


def kept_by_trigger(table: str, spec: dict) -> tuple[str, str]:
    function = f"tiddly_{table}_vectors"
    head_changed = " OR ".join(f"NEW.{f} IS DISTINCT FROM OLD.{f}" for f in spec["changed"])
    search_vector = f"({spec['search_head']}) || {CONTENT_VECTOR}"
    forward = f"""
ALTER TABLE "{table}" ALTER COLUMN search_vector DROP EXPRESSION,
  ALTER COLUMN search_head DROP EXPRESSION, ALTER COLUMN content_opening DROP EXPRESSION,
  ALTER COLUMN head_text DROP EXPRESSION;
CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $f$
DECLARE
  head boolean; opening boolean;
BEGIN
  IF TG_OP = 'INSERT' THEN
    head := true; opening := true;
  ELSE
    head := {head_changed};
    -- A prefix of the stored content is read without decompressing all of it.
    opening := left(COALESCE(NEW.content, ''), {OPENING})
      IS DISTINCT FROM left(COALESCE(OLD.content, ''), {OPENING});
  END IF;
  IF head THEN
    NEW.search_head := {spec["search_head"]};
    NEW.head_text := {spec["head_text"]};
  END IF;
  IF opening THEN
    NEW.content_opening := {OPENING_TEXT};
  END IF;
  IF head OR opening THEN
    NEW.search_vector := {search_vector};
  END IF;
  RETURN NEW;
END $f$;
CREATE TRIGGER "{table}_vectors" BEFORE INSERT OR UPDATE ON "{table}"
  FOR EACH ROW EXECUTE FUNCTION {function}();
"""
    generated = {
        "search_vector": search_vector,
        "search_head": spec["search_head"],
        "content_opening": OPENING_TEXT,
        "head_text": spec["head_text"],
    }
    backward = [
        f'DROP TRIGGER IF EXISTS "{table}_vectors" ON "{table}"',
        f"DROP FUNCTION IF EXISTS {function}()",
    ]
    for column, expression in generated.items():
        index, kind = INDEXES[column]
        ops = " gin_trgm_ops" if kind == "text" else ""
        backward += [
            f'ALTER TABLE "{table}" DROP COLUMN {column}',
            f'ALTER TABLE "{table}" ADD COLUMN {column} {kind} GENERATED ALWAYS AS '
            f"({expression.replace('NEW.', '')}) STORED",
            f'CREATE INDEX "{table}_{index}" ON "{table}" USING gin ({column}{ops})',
        ]
    return forward, ";\n".join(backward) + ";"


class RunPostgresSQL(migrations.RunSQL):
    """``RunSQL`` on PostgreSQL only."""

    def database_forwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label, schema_editor, *args):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, *args)


class Migration(migrations.Migration):
    dependencies = [("content", "0023_postgres_pieces_in_one_pass")]
    operations = [RunPostgresSQL(*kept_by_trigger(t, spec)) for t, spec in TABLES.items()]
