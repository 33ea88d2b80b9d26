"""Migration operations that apply on one database only (PostgreSQL: full-text search, TOAST
compression, trigrams; SQLite: the indexed content opening).

SQLite has no tsvector; on it the PostgreSQL operations do nothing and lists fall back to substring
search.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

FTS_CONTENT_CHARS = 100_000


def _title(extra_a: str | None) -> str:
    """The title (and url/name) as one text: what both full-text vectors weigh A."""
    title = "coalesce(title, '')"
    return f"{title} || ' ' || coalesce({extra_a}, '')" if extra_a else title


def search_vector_sql(table: str, extra_a: str | None = None) -> tuple[str, str]:
    """A stored, generated tsvector: title (and url/name) > description > the content's opening.

    Only the first ``FTS_CONTENT_CHARS`` characters of the content are indexed, which keeps every
    vector far below PostgreSQL's 1 MB tsvector limit and a large item's save fast; substring
    matching still covers the whole content.
    """
    title = _title(extra_a)
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


HEAD_COLUMN = "search_head"
HEAD_TEXT_COLUMN = "head_text"


def search_head_sql(table: str, extra_a: str | None = None) -> tuple[str, str]:
    """PostgreSQL: the short fields (title (and url/name), description) as two stored, generated
    columns: ``search_head``, their tsvector (A > B) with a GIN index, what hybrid search's
    keyword leg finds and ranks by; and ``head_text``, their lowercased text with a trigram
    index, where that leg and its typo checks look for the query as written.

    Ranking by ``search_vector`` reads every hit's whole vector (TOASTed for a large content):
    92 ms for 9 700 hits of 10 000 notes, against 20 ms unranked. A hit only in the content
    ranks 0 there and falls back to recency; the meaning leg ranks contents. ``title ILIKE``
    scans every row: 11 ms for 10 000 notes, a trigram index well under one."""
    title = _title(extra_a)
    expression = (
        f"setweight(to_tsvector('english'::regconfig, {title}), 'A') || "
        "setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B')"
    )
    text = f"lower({title} || chr(10) || coalesce(description, ''))"
    forward = (
        f'ALTER TABLE "{table}" ADD COLUMN {HEAD_COLUMN} tsvector '
        f"GENERATED ALWAYS AS ({expression}) STORED, "
        f"ADD COLUMN {HEAD_TEXT_COLUMN} text GENERATED ALWAYS AS ({text}) STORED; "
        f'CREATE INDEX "{table}_{HEAD_COLUMN}" ON "{table}" USING gin ({HEAD_COLUMN}); '
        f'CREATE INDEX "{table}_{HEAD_TEXT_COLUMN}" ON "{table}" '
        f"USING gin ({HEAD_TEXT_COLUMN} gin_trgm_ops);"
    )
    backward = (
        f'DROP INDEX IF EXISTS "{table}_{HEAD_TEXT_COLUMN}"; '
        f'DROP INDEX IF EXISTS "{table}_{HEAD_COLUMN}"; '
        f'ALTER TABLE "{table}" DROP COLUMN IF EXISTS {HEAD_TEXT_COLUMN}, '
        f"DROP COLUMN IF EXISTS {HEAD_COLUMN};"
    )
    return forward, backward


#: The stored, generated column holding the content's lowercased opening (PostgreSQL; see
#: ``content_trigram_sql``; SQLite keeps it in an FTS5 index, see ``sqlite_opening_sql``): what
#: typo tolerance and hybrid search's keyword leg search.
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


#: SQLite: how much of each content its FTS5 index holds. The index is kept by triggers in the
#: write's own transaction, at ~0.13 ms a 1 000 characters (tokenising the old opening out and the
#: new one in): 20 000 characters cost an edit ~2.6 ms where 100 000 (PostgreSQL's opening) would
#: cost 13 ms (measured in-memory, 10 000-line notes).
SQLITE_OPENING_CHARS = 20_000


def sqlite_opening_sql(table: str, head: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """SQLite: ``content`` moved to the end of the row, and an FTS5 trigram index of each item's
    short fields (``head``: title, description, url or name) and of its content's opening (its
    first ``SQLITE_OPENING_CHARS``), kept by triggers. Statements as a list: Django runs each as
    it is (trigger bodies hold semicolons).

    The move: SQLite stores a row's columns in order, a large value spilling onto a chain of
    overflow pages, so reading any column after a 6 MB content walks ~1 500 pages. ``content``
    came before ``created_at``, ``updated_at``, ``url``, ``name``…: sorting or loading a page that
    held a big note read all of it (1.4 ms a row). Last, it is read only when asked for.

    The index, ``"{table}_search"`` (FTS5, ``trigram``, ``detail=none``; content migration 0020 and
    prompts 0008 rebuild it with ``detail=full``, for substrings as phrases): ``head`` and
    ``opening``, lowercased and indexed (~5 MB of index for the 25 MB of openings of 10 000 notes
    and 100 big ones), and ``raw``, the opening as written, not indexed (match snippets keep
    their case without reading a large content). ``head GLOB '*word*'`` and ``opening GLOB
    '*word*'`` are answered from the trigrams in under a millisecond where scanning the rows
    takes 10 to 55 ms. ``"{table}_search_key"`` gives each item a stable integer key for the
    index's rowid (the table's own rowid may change on VACUUM: its primary key is a UUID). The
    update trigger fires only when the head or the opening changed: an edit past the opening
    costs nothing.

    Django rebuilds a SQLite table for some later ``AlterField``s: that drops the triggers and
    puts ``content`` back in the model's order. A later migration rebuilding these tables must
    re-run this operation (``content/tests/test_search_opening.py`` fails if it does not)."""
    key = f'"{table}_search_key"'
    index = f'"{table}_search"'

    def heads(row: str) -> str:
        return "lower(" + " || char(10) || ".join(f"coalesce({row}{f},'')" for f in head) + ")"

    def raw(row: str) -> str:
        return f"substr(coalesce({row}content,''),1,{SQLITE_OPENING_CHARS})"

    def values(row: str) -> str:  # head, opening, raw (SQLite's lower() folds ASCII only)
        return f"{heads(row)}, lower({raw(row)}), {raw(row)}"

    def key_of(row: str) -> str:
        return f"(SELECT key FROM {key} WHERE id = {row}.id)"

    changed = " OR ".join(
        f"{expression('old.')} IS NOT {expression('new.')}" for expression in (heads, raw)
    )
    forward = [
        f'ALTER TABLE "{table}" ADD COLUMN content_last text NULL',
        f'UPDATE "{table}" SET content_last = content',
        f'ALTER TABLE "{table}" DROP COLUMN content',
        f'ALTER TABLE "{table}" RENAME COLUMN content_last TO content',
        f"CREATE TABLE {key} (key integer NOT NULL PRIMARY KEY, id char(32) NOT NULL UNIQUE)",
        f"CREATE VIRTUAL TABLE {index} USING fts5("
        "head, opening, raw UNINDEXED, tokenize='trigram', detail='none')",
        f'INSERT INTO {key} (id) SELECT id FROM "{table}"',
        f"INSERT INTO {index} (rowid, head, opening, raw) SELECT k.key, {values('t.')} "
        f'FROM {key} k JOIN "{table}" t ON t.id = k.id',
        f'CREATE TRIGGER "{table}_search_insert" AFTER INSERT ON "{table}" BEGIN '
        f"INSERT INTO {key} (id) VALUES (new.id); "
        f"INSERT INTO {index} (rowid, head, opening, raw) "
        f"VALUES ({key_of('new')}, {values('new.')}); "
        "END",
        f'CREATE TRIGGER "{table}_search_update" AFTER UPDATE OF {", ".join(head)}, content '
        f'ON "{table}" WHEN {changed} BEGIN '
        f"DELETE FROM {index} WHERE rowid = {key_of('new')}; "
        f"INSERT INTO {index} (rowid, head, opening, raw) "
        f"VALUES ({key_of('new')}, {values('new.')}); "
        "END",
        f'CREATE TRIGGER "{table}_search_delete" AFTER DELETE ON "{table}" BEGIN '
        f"DELETE FROM {index} WHERE rowid = {key_of('old')}; "
        f"DELETE FROM {key} WHERE id = old.id; "
        "END",
    ]
    backward = [  # ``content`` stays last: the order of columns is not part of the schema
        f'DROP TRIGGER IF EXISTS "{table}_search_delete"',
        f'DROP TRIGGER IF EXISTS "{table}_search_update"',
        f'DROP TRIGGER IF EXISTS "{table}_search_insert"',
        f"DROP TABLE IF EXISTS {index}",
        f"DROP TABLE IF EXISTS {key}",
    ]
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
