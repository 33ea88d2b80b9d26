"""Migration operations that apply on one database only (PostgreSQL: full-text search, TOAST
compression, trigrams; SQLite: the indexed content opening).

SQLite has no tsvector; on it the PostgreSQL operations do nothing and lists fall back to substring
search.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

FTS_CONTENT_CHARS = 100_000


def search_vector_sql(table: str, extra_a: str | None = None) -> tuple[str, str]:
    """A stored, generated tsvector: title (and url/name) > description > the content's opening.

    Only the first ``FTS_CONTENT_CHARS`` characters of the content are indexed, which keeps every
    vector far below PostgreSQL's 1 MB tsvector limit and a large item's save fast; substring
    matching still covers the whole content.
    """
    title = "coalesce(title, '')"
    if extra_a:
        title = f"{title} || ' ' || coalesce({extra_a}, '')"
    expression = (
        f"setweight(to_tsvector('english'::regconfig, {title}), 'A') || "
        "setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B') || "
        "setweight(to_tsvector('english'::regconfig, "
        f"left(coalesce(content, ''), {FTS_CONTENT_CHARS})), 'C')"
    )
    forward = (
        f'ALTER TABLE "{table}" ADD COLUMN search_vector tsvector '
        f"GENERATED ALWAYS AS ({expression}) STORED; "
        f'CREATE INDEX "{table}_search_vector" ON "{table}" USING gin (search_vector); '
        # lz4 compresses and decompresses large TOASTed text several times faster than pglz.
        f'ALTER TABLE "{table}" ALTER COLUMN content SET COMPRESSION lz4;'
    )
    backward = (
        f'DROP INDEX IF EXISTS "{table}_search_vector"; '
        f'ALTER TABLE "{table}" DROP COLUMN IF EXISTS search_vector; '
        f'ALTER TABLE "{table}" ALTER COLUMN content SET COMPRESSION DEFAULT;'
    )
    return forward, backward


#: The generated column holding the content's lowercased opening (PostgreSQL: stored, see
#: ``content_trigram_sql``; SQLite: virtual, see ``sqlite_opening_sql``): what typo tolerance and
#: hybrid search's keyword leg search.
OPENING_COLUMN = "content_opening"


def content_words_expression() -> str:
    """The content's opening ``FTS_CONTENT_CHARS`` characters, lowercased (as the full-text
    vector indexes them, so a 10 MB note costs no more than a 100 KB one)."""
    return f"lower(left(coalesce(content, ''), {FTS_CONTENT_CHARS}))"


def content_trigram_sql(table: str) -> tuple[str, str]:
    """pg_trgm, a stored generated column of the content's opening and a GIN trigram index on it:
    typo tolerance in content (SPEC §16) and hybrid search's keyword leg find the items holding a
    word without reading whole contents. A column of its own, because an expression over
    ``content`` would decompress every large content in full to recheck an index hit (lz4 TOAST
    is not sliced)."""
    forward = (
        "CREATE EXTENSION IF NOT EXISTS pg_trgm; "
        f'ALTER TABLE "{table}" ADD COLUMN {OPENING_COLUMN} text '
        f"GENERATED ALWAYS AS ({content_words_expression()}) STORED; "
        f'CREATE INDEX IF NOT EXISTS "{table}_content_trgm" ON "{table}" '
        f"USING gin ({OPENING_COLUMN} gin_trgm_ops);"
    )
    backward = (
        f'DROP INDEX IF EXISTS "{table}_content_trgm"; '
        f'ALTER TABLE "{table}" DROP COLUMN IF EXISTS {OPENING_COLUMN};'
    )
    return forward, backward


def sqlite_opening_sql(table: str) -> tuple[str, str]:
    """SQLite: a virtual generated column of the content's lowercased opening (the same
    expression as PostgreSQL's) and an index of (owner, opening). A LIKE over an owner's openings
    then reads only the index's entries (the rowid is in every entry: the index covers the
    query), never the table's rows, whose contents may be megabytes each. Virtual, because
    SQLite cannot add a stored column to an existing table; the index stores the values.

    Django rebuilds a SQLite table for some later ``AlterField``s and would drop this column and
    its index, which its model does not declare: a later migration touching these tables must
    re-run this operation (``test_the_opening_index_covers_the_hybrid_keyword_leg`` fails if it
    does not)."""
    forward = (
        f'ALTER TABLE "{table}" ADD COLUMN {OPENING_COLUMN} text '
        # SQLite has no left(); its lower() folds ASCII only, as its LIKE does.
        f"GENERATED ALWAYS AS (lower(substr(coalesce(content, ''), 1, {FTS_CONTENT_CHARS}))) "
        "VIRTUAL; "
        f'CREATE INDEX "{table}_opening" ON "{table}" (owner_id, {OPENING_COLUMN});'
    )
    backward = (
        f'DROP INDEX IF EXISTS "{table}_opening"; '
        f'ALTER TABLE "{table}" DROP COLUMN {OPENING_COLUMN};'
    )
    return forward, backward


class RunVendorSQL(migrations.RunSQL):
    """``RunSQL`` that is skipped on databases other than ``vendor``."""

    vendor = ""

    def database_forwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == self.vendor:
            super().database_forwards(app_label, schema_editor, *args)

    def database_backwards(self, app_label: str, schema_editor: Any, *args: Any) -> None:
        if schema_editor.connection.vendor == self.vendor:
            super().database_backwards(app_label, schema_editor, *args)


class RunPostgresSQL(RunVendorSQL):
    vendor = "postgresql"


class RunSQLiteSQL(RunVendorSQL):
    vendor = "sqlite"
