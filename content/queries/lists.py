"""Reads: owner-scoped querysets and the list/search queries (SPEC §3.3).

A list costs a constant number of queries whatever its length: one page query, a count (unless
the page is not full: then it ends the list), and one tag-names query per item type on the page (``attach_tags``; plus the captures of bookmarks).
Lists never load ``content``: its length and the first 500 characters come from the database.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, cast

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import (
    Case,
    CharField,
    Count,
    F,
    FloatField,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast, Coalesce, Length, Lower, NullIf, Substr
from django.utils import timezone

from content import item_types, rules
from content.dbops import HEAD_COLUMN, HEAD_TEXT_COLUMN, OPENING_COLUMN
from content.models import Item, ItemQuerySet, ItemState, Share, Tag, state_q
from content.queries import cache as content_cache
from content.queries import fulltext
from content.queries.filters import get_filter
from content.shapes import PREVIEW_CHARS, TagCount
from tiddly import compiled
from tiddly.memory import note_read

_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class ListParams:
    q: str = ""
    tags: list[str] = field(default_factory=list)
    tag_match: str = "all"
    views: list[str] = field(default_factory=lambda: [ItemState.ACTIVE])
    sort_by: str | None = None
    sort_order: str = "desc"
    limit: int = 50
    offset: int = 0
    # A saved filter (SPEC §11): its tag groups (OR of ANDs) and item types; None = no filter.
    filter_groups: tuple[tuple[str, ...], ...] | None = None
    filter_types: tuple[str, ...] | None = None
    # PostgreSQL: False matches ``q`` in the content's indexed opening (and the full-text index)
    # and as a substring of the short fields only, never scanning whole contents. SQLite always
    # answers from its indexes (words over whole contents, substrings of the short fields and
    # the content's opening): see ``_sqlite_search``.
    q_whole_content: bool = True
    # PostgreSQL: read the long items whose word pieces match first (``_deep_hits``: two more
    # statements, each on its index, inside ``bitmap_scans``) instead of one subquery the planner
    # may answer by reading every piece. The search endpoint's keyword leg; lists keep their
    # fixed number of queries.
    q_deep_first: bool = False

    def includes(self, type_name: str) -> bool:
        return self.filter_types is None or type_name in self.filter_types

    @property
    def effective_sort(self) -> str:
        if self.sort_by:
            return self.sort_by
        return "relevance" if self.q else "created_at"


def owned(owner: Any, model: type[Item]) -> ItemQuerySet:
    return model.objects.filter(owner=owner)


def one(qs: QuerySet | compiled.Shaped) -> Any:
    """The single row or None. Cheaper than ``.first()`` (no ORDER BY) on this hot path; the
    item's tags are one plain query when serialized, cheaper than prefetch machinery for one row.
    A ``Shaped`` query is built and compiled once per shape (``tiddly.compiled``).
    """
    if isinstance(qs, compiled.Shaped):
        return compiled.one(qs)
    try:
        return qs.get()
    except qs.model.DoesNotExist:
        return None


def one_with_content(qs: QuerySet | compiled.Shaped) -> Any:
    """Like ``one``, but a large content comes from ``content_cache`` when it is current.

    On PostgreSQL one query returns the metadata, the content's stored size and — only when it is
    small — the content itself. A large content is then taken from the cache (keyed by
    ``updated_at``) or fetched once, guarded by ``updated_at`` so a concurrent write can't be
    cached under the old key. Works under ``select_for_update`` too (the write services).
    """
    if not uses_fts() or not settings.TIDDLY_CONTENT_CACHE_CHARS:
        item = one(qs)
        note_read(getattr(item, "content", None))
        return item
    model = qs.model
    column = f'"{model._meta.db_table}"."content"'
    threshold = settings.TIDDLY_CONTENT_CACHE_MIN_BYTES

    def sized(rows: QuerySet) -> QuerySet:
        return rows.defer("content").annotate(
            stored_size=RawSQL(f"pg_column_size({column})", []),
            small_content=RawSQL(
                f"CASE WHEN pg_column_size({column}) < %s THEN {column} END", [threshold]
            ),
        )

    item = one(compiled.then(qs, ("sized", threshold), sized))
    if item is None or item.stored_size is None or item.stored_size < threshold:
        if item is not None:
            item.content = item.small_content
            note_read(item.content)  # stored compressed: small on disk, maybe long in memory
        return item
    key = content_cache.key(item)
    content = content_cache.contents.get(key)
    if content is None:
        current = model.objects.filter(pk=item.pk, updated_at=item.updated_at)
        content = current.values_list("content", flat=True).first()
        if content is None:  # changed (or deleted) since the first query: read it afresh
            return one(qs)
        content_cache.contents.put(key, content)
    item.content = content
    note_read(content)
    return item


def one_with_slice(
    qs: QuerySet | compiled.Shaped, at: int, chars: int
) -> tuple[Any, str | None] | None:
    """Like ``one_with_content`` for a reader of some lines: ``(item, piece)``.

    On PostgreSQL a large content that the content cache does not hold comes as ``piece``: its
    characters from ``at`` (0-based; 0, or just after a newline) on, at most ``chars + 1`` of
    them (more than ``chars``: the content goes on), and ``item.content`` is None. PostgreSQL
    then decompresses the content only up to there, where a 6 MB content takes it ~30 ms to
    decompress whole. Anything else comes whole (``piece`` None), as does a content whose
    character before ``at`` is not a newline.
    """
    if not uses_fts() or not settings.TIDDLY_CONTENT_CACHE_CHARS:
        item = one(qs)
        if item is None:
            return None
        note_read(item.content)
        return item, None
    if isinstance(qs, compiled.Shaped):  # the annotations below carry the request's values
        qs = qs.queryset()
    column = f'"{qs.model._meta.db_table}"."content"'
    threshold = settings.TIDDLY_CONTENT_CACHE_MIN_BYTES
    large = f"pg_column_size({column}) >= %s"
    # From the character before ``at`` (1-based ``at``), to check that it ends a line.
    begin, length = (at, chars + 2) if at else (1, chars + 1)
    item = one(
        qs.defer("content").annotate(
            small_content=RawSQL(f"CASE WHEN NOT {large} THEN {column} END", [threshold]),
            piece=RawSQL(
                f"CASE WHEN {large} THEN substr({column}, %s, %s) END", [threshold, begin, length]
            ),
        )
    )
    if item is None:
        return None
    if item.piece is None:  # small (or null): it came whole
        item.content = item.small_content
        note_read(item.content)
        return item, None
    cached = content_cache.contents.get(content_cache.key(item))
    if cached is not None:
        item.content = cached
        note_read(cached)
        return item, None
    if at and not item.piece.startswith("\n"):
        whole = one_with_content(qs)
        return None if whole is None else (whole, None)
    item.content = None
    return item, item.piece[1:] if at else item.piece


def uses_fts() -> bool:
    return connection.vendor == "postgresql"


# --- lists --------------------------------------------------------------------------------------


def listed_q(model: type[Item], params: ListParams, now: datetime | None = None) -> Q:
    """What a list keeps of the owner's items of one type before ``q``: its views, tags and saved
    filter as one condition (an aggregate's ``filter`` can count it)."""
    now = now or timezone.now()
    condition = Q()
    for view in params.views:
        condition |= state_q(view, now)
    if params.tags:
        condition &= Q(pk__in=_tagged_ids(model, params.tags, params.tag_match))
    if params.filter_groups:
        condition &= groups_q(model, params.filter_groups)
    return condition


def filtered_items(
    owner: Any, model: type[Item], params: ListParams, now: datetime | None = None
) -> QuerySet:
    qs: QuerySet = owned(owner, model).filter(listed_q(model, params, now))
    if params.q:
        qs = _search(qs, model, owner, params)
    else:
        qs = qs.annotate(rank=Value(0.0, output_field=FloatField()))
    return qs


def _tagged_ids(model: type[Item], tags: list[str], tag_match: str) -> QuerySet:
    through = model.tags.through
    item_col = f"{model._meta.model_name}_id"
    links = through._default_manager.filter(tag__name__in=tags).values(item_col)
    if tag_match == "any":
        return links
    return (
        links.annotate(n=Count("tag_id", distinct=True)).filter(n=len(set(tags))).values(item_col)
    )


def groups_q(model: type[Item], groups: tuple[tuple[str, ...], ...]) -> Q:
    """A saved filter's expression in SQL: one ``id IN (items having all the group's tags)``
    subquery per group, OR-ed. No groups = no condition."""
    condition = Q()
    for tags in groups:
        condition |= Q(pk__in=_tagged_ids(model, list(tags), "all"))
    return condition


HYBRID_CONTENT_HITS = 300  # = search.HYBRID_KEYWORD_DEPTH: the most that leg keeps


def _search(qs: QuerySet, model: type[Item], owner: Any, params: ListParams) -> QuerySet:
    q, whole_content = params.q, params.q_whole_content
    if not uses_fts():
        return _sqlite_search(qs, model, q)
    # The whole query as a substring of what the trigram indexes hold (the short fields, the
    # content's opening), never a scan of whole contents; its words reach every line through
    # search_vector and, past the opening, the word pieces (content migration 0017).
    hits: list[Any] = _indexed_substrings(model, q)
    table = model._meta.db_table
    tsquery = f"websearch_to_tsquery('{fulltext.CONFIG}', %s)"
    # The full-text hits as an id subquery the GIN index answers (a per-row "@@" would read, and
    # for a large item detoast, every row's vector).
    # (Unqualified: inside the subquery the column is the subquery's own table's.)
    ranked_by = "search_vector" if whole_content else HEAD_COLUMN
    clauses = fulltext.parse(q)
    # A "-word" past the opening is not in these vectors: an item with word pieces is then
    # decided by the deep hits below, which see its whole content. ("id" is the item's: the
    # pieces have no such column.)
    short = (
        [f'NOT EXISTS (SELECT 1 FROM "{table}_words" w WHERE w.item_id = id)']
        if any(t.negated for clause in clauses for t in clause)
        else []
    )
    hits.append(owned(owner, model).extra(where=[f"{ranked_by} @@ {tsquery}", *short], params=[q]))
    if not whole_content:
        # Hybrid's keyword leg finds and ranks by the short fields' small vector (content.dbops.
        # search_head_sql): hits there first, by rank; then hits only in the content, newest
        # first, of which it needs at most HYBRID_CONTENT_HITS. Asking for just those keeps a
        # query whose words are in nearly every note (PostgreSQL then reads every row's vector
        # instead of the index) at a bounded cost.
        newest = qs.extra(where=[f"search_vector @@ {tsquery}", *short], params=[q])
        hits.append(newest.order_by("-created_at")[:HYBRID_CONTENT_HITS])
    if params.q_deep_first:
        found = _deep_hits(owner, table, clauses)
        if found:
            kind = model._meta.pk.db_type(connection)
            hits.append(RawSQL(f"SELECT unnest(%s::{kind}[])", [found]))
    else:
        deep = fulltext.postgres_deep_hits(table, clauses, owner=getattr(owner, "pk", owner))
        if deep is not None:
            hits.append(RawSQL(*deep))
    qs = qs.annotate(
        rank=RawSQL(f'ts_rank("{table}"."{ranked_by}", {tsquery})', [q], output_field=FloatField()),
    ).filter(pk__in=_any_of(hits))
    if _WORD.search(q):
        # A query made only of stop words ("the", "a and of") has an empty tsquery; it would
        # otherwise substring-match nearly everything.
        qs = qs.extra(where=[f"numnode({tsquery}) > 0"], params=[q])
    return qs


def _any_of(parts: list[Any]) -> RawSQL:
    """One ``id IN (a UNION b …)`` of id subqueries (querysets or RawSQL), not ``id IN a OR id IN
    b …``: PostgreSQL checks an OR of subqueries row by row, reading every item of the table (all
    owners': 100 000 notes, 70 ms), where the union's few ids are looked up on the primary key."""
    sqls, params = [], []
    for part in parts:
        if isinstance(part, RawSQL):
            sql, args = part.sql, list(part.params)
        else:
            sql, args = part.values("pk").query.sql_with_params()
        sqls.append(f"({sql})")
        params += args
    return RawSQL(" UNION ".join(sqls), params)


def _deep_hits(owner: Any, table: str, clauses: list[fulltext.Clause]) -> list[Any] | None:
    """The owner's long items matching every clause in their word pieces or short fields
    (``fulltext.postgres_deep_hits``): the few items with a piece holding any query word first,
    then the clauses checked on just those (in one statement, PostgreSQL read every row of the
    item table). Run inside ``bitmap_scans``."""
    candidates = fulltext.postgres_deep_candidates(table, clauses)
    if candidates is None:
        return None
    with connection.cursor() as cursor:
        sql, args = candidates
        cursor.execute(sql, [getattr(owner, "pk", owner), *args])
        ids = [row[0] for row in cursor.fetchall()]
        deep = fulltext.postgres_deep_hits(table, clauses, within=ids) if ids else None
        if deep is not None:
            cursor.execute(*deep)
            ids = [row[0] for row in cursor.fetchall()]
    return ids


@contextmanager
def bitmap_scans() -> Iterator[None]:
    """PostgreSQL: the statements inside are planned with bitmap index scans only (sequential and
    plain index scans off for this connection until the block ends; the search endpoint's keyword
    leg, with ``q_deep_first``). The planner prices a scan of the word pieces by their table's
    pages, not by the TOASTed vectors each row's "@@" reads (100 long notes: ~130 MB), and takes
    a sequential or primary-key scan over the GIN index whenever the index's pending list holds
    pages (after writes of long notes, until a vacuum): 200 ms a query word instead of 0.2 ms.
    Set once for the whole leg: two statements, not two a type. No-op on SQLite."""
    if not uses_fts():
        yield
        return
    names = ("enable_seqscan", "enable_indexscan")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT "
            + ", ".join(f"current_setting('{n}'), set_config('{n}', 'off', false)" for n in names)
        )
        before = cursor.fetchone()[0::2]

    def restore() -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT " + ", ".join(f"set_config('{n}', %s, false)" for n in names), list(before)
            )

    try:
        yield
    except BaseException:
        # In a failed transaction the statement fails too; its rollback undoes the setting.
        with suppress(DatabaseError):
            restore()
        raise
    restore()


def fts_q(model: type[Item], word: str) -> Q:
    """PostgreSQL: the items whose full-text vector holds ``word`` (stemmed), from its GIN index."""
    tsquery = f"plainto_tsquery('{fulltext.CONFIG}', %s)"
    hits = model.objects.extra(where=[f"search_vector @@ {tsquery}"], params=[word])
    return Q(pk__in=hits.values("pk"))


def _sqlite_search(qs: QuerySet, model: type[Item], q: str) -> QuerySet:
    """SQLite (SPEC §3.3, round 4): ``q``'s words, phrases, ORs and -words over the whole content
    and the short fields, from the FTS5 word index (content.queries.fulltext), or ``q`` as a
    case-insensitive substring of the short fields or the content's indexed opening. Ranked as
    PostgreSQL weighs a hit: a query word in the title, then the description, then anywhere;
    substring-only hits last."""
    clauses = fulltext.parse(q)
    if not clauses and _WORD.search(q):
        # Only stop words (as PostgreSQL's empty tsquery): nothing, not every substring.
        return qs.filter(pk__in=[]).annotate(rank=Value(0.0, output_field=FloatField()))
    qs, condition = indexed_substring(qs, model, q)
    rank: Any = Value(0.0, output_field=FloatField())
    if clauses:
        table = model._meta.db_table
        hits = RawSQL(*fulltext.hits_sql(table, clauses))
        condition |= Q(pk__in=hits)
        whens = [
            When(pk__in=RawSQL(*fulltext.column_hits_sql(table, terms, column)), then=weight)
            for terms in [fulltext.positive_terms(clauses)]
            if terms
            for column, weight in fulltext.WEIGHTS
        ]
        whens.append(When(pk__in=hits, then=fulltext.ANYWHERE))
        rank = Case(*whens, default=0.0, output_field=FloatField())
    return qs.filter(condition).annotate(rank=rank)


def indexed_substring(qs: QuerySet, model: type[Item], q: str) -> tuple[QuerySet, Q]:
    """SQLite: ``q`` as a case-insensitive substring of the short fields or the content's opening,
    from the trigram index; SQLite folds ASCII only, so a non-ASCII ``q`` also folds the short
    fields in Python (of the rows of ``qs``, the owner's)."""
    condition = Q(pk__in=fulltext.indexed_hits(model, q))
    if q.isascii():
        return qs, condition
    short = [name for name in model.search_fields if name != "content"]
    qs = qs.alias(**{f"folded_{name}": _CaseFold(name) for name in short})
    for name in short:
        condition |= Q(**{f"folded_{name}__contains": q.casefold()})
    return qs, condition


def substring_q(
    qs: QuerySet, model: type[Item], q: str, *, whole_content: bool = True
) -> tuple[QuerySet, Q]:
    """``q`` as a case-insensitive substring of any of the type's search fields; with
    ``whole_content=False`` only the content's indexed opening is searched, and on SQLite (for an
    ASCII ``q``: its index folds as SQLite does, ASCII only) the short fields through their index
    too."""
    if not whole_content and not uses_fts() and q.isascii():
        return qs, Q(pk__in=fulltext.indexed_hits(model, q))
    if not whole_content and uses_fts():
        substring = Q()
        for part in _indexed_substrings(model, q):
            substring |= Q(pk__in=part)
        return qs, substring
    substring = Q()
    for name in model.search_fields:
        substring |= Q(**{f"{name}__icontains": q})
    return qs, substring


def _indexed_substrings(model: type[Item], q: str) -> list[RawSQL]:
    """PostgreSQL: id subqueries of ``q`` as a substring of the short fields' indexed text, and
    of the content's indexed opening (not the whole text) for one token (a code, an identifier,
    a fragment); words are matched there by the full-text index (a phrase of common words makes
    the trigram index recheck hundreds of openings)."""
    parts = [_indexed_contains(model, HEAD_TEXT_COLUMN, q)]
    if len(q.split()) <= 1:
        parts.append(_indexed_contains(model, OPENING_COLUMN, q))
    return parts


def _indexed_contains(model: type[Item], column: str, q: str) -> RawSQL:
    """PostgreSQL: the ids of items whose lowercased ``column`` (the short fields' text, or the
    content's first FTS_CONTENT_CHARS characters) holds ``q`` (case-insensitively; the caller
    keeps the owner's) — a subquery the column's trigram GIN index answers, so a huge content
    costs no more than a small one."""
    pattern = "%" + q.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    table = model._meta.db_table
    return RawSQL(f"SELECT id FROM \"{table}\" WHERE {column} LIKE %s ESCAPE '\\'", [pattern])


class _CaseFold(Func):
    """Unicode case folding on SQLite (registered in content.apps); its LIKE folds ASCII only."""

    function = "TIDDLY_CASEFOLD"
    output_field = TextField()


def _sort_title(model: type[Item]) -> Any:
    fallback = F(model.title_fallback) if model.title_fallback else Value("")
    return Lower(Coalesce(NullIf(F("title"), Value("")), fallback, output_field=CharField()))


def ordering(params: ListParams) -> list[Any]:
    desc = params.sort_order == "desc"
    key = params.effective_sort
    if key == "relevance":
        return [F("rank").desc(), F("created_at").desc(), F("id").desc()]
    column = "sort_title" if key == "title" else key
    order = [F(column), F("created_at"), F("id")]
    return [o.desc() if desc else o.asc() for o in order]


def _list_columns(qs: QuerySet, model: type[Item], preview: bool = True) -> QuerySet:
    if not preview:  # the library's rows: no content length, opening or share link
        return qs.defer("content")
    return qs.defer("content").annotate(
        content_length=Length("content"),
        content_head=Substr("content", 1, PREVIEW_CHARS),
        sort_title=_sort_title(model),
        **_share_columns(model),
    )


def _share_columns(model: type[Item]) -> dict[str, Any]:
    """The item's share link as three columns of the list query (shapes.share_data reads them):
    correlated lookups on the one-per-item unique index, so no query per item."""
    link = Share.objects.filter(item_type=model.type_name, item_id=OuterRef("pk"))
    return {
        f"share_{column}": Subquery(link.values(column)[:1])
        for column in ("token", "created_at", "origin")
    }


def _related(model: type[Item]) -> tuple[str, ...]:
    # A bookmark's capture rides along (tags come from ``attach_tags``): a list stays a constant
    # number of queries.
    return ("capture",) if model.type_name == "bookmark" else ()


def attach_tags(model: type[Item], items: list[Item]) -> list[Item]:
    """Set each item's tag names (``Item.tag_names`` reads them) from one query of (item, name)
    pairs. Django's many-to-many prefetch builds a related manager and a queryset per item and a
    Tag per row, which cost more than the page query itself."""
    if not items:
        return items
    column = f"{model._meta.model_name}_id"
    names: dict[Any, list[str]] = {item.pk: [] for item in items}
    pairs = model.tags.through._default_manager.filter(**{f"{column}__in": list(names)})
    for item_id, name in pairs.values_list(column, "tag__name"):
        names[item_id].append(name)
    for item in items:
        item.prefetched_tag_names = names[item.pk]
    return items


def list_items(owner: Any, model: type[Item], params: ListParams) -> tuple[int, list[Item]]:
    if not params.includes(model.type_name):
        return 0, []  # the saved filter excludes this type
    qs = filtered_items(owner, model, params)
    page = list(
        _list_columns(qs, model)
        .prefetch_related(*_related(model))
        .order_by(*ordering(params))[params.offset : params.offset + params.limit]
    )
    return _total(qs, params, len(page)), attach_tags(model, page)


def _total(qs: Any, params: ListParams, shown: int) -> int:
    """How many items the list has: a page that is not full (and not empty past the start) ends
    the list, so its length tells without a count query."""
    if shown < params.limit and (shown or not params.offset):
        return params.offset + shown
    return int(qs.count())


def list_content(owner: Any, types: list[str], params: ListParams) -> tuple[int, list[Item]]:
    """One ordered, paginated list over several item types (a UNION of their id/sort columns)."""
    parts = _union_parts(owner, types, params)
    if not parts:
        return 0, []
    rows = _page_rows(parts, params)
    return _total(_union(parts), params, len(rows)), load_rows(owner, rows)


def content_page(owner: Any, types: list[str], params: ListParams) -> list[Item]:
    """``list_content``'s page without its count or its items' content previews and share links:
    the library's list (which counts with its tag chips' query). Without ``q`` its SQL is
    compiled once per shape (``compiled``)."""
    types = [t for t in types if params.includes(t)]
    if not types:
        return []
    if params.q:
        rows = _page_rows(_union_parts(owner, types, params), params)
    else:

        def build(owner: Any, now: datetime) -> QuerySet:
            return _page_union(_union_parts(owner, types, params, now=now), params)

        rows = compiled.rows(("page", tuple(types), repr(params)), build, owner.pk, timezone.now())
        for row in rows:
            row["id"] = item_types.model_for(row["kind"])._meta.pk.to_python(row["id"])
    return load_rows(owner, rows, preview=False)


def _page_rows(parts: list[Any], params: ListParams) -> list[dict[str, Any]]:
    """The page's id/sort rows. Where the database takes ORDER BY and LIMIT inside a UNION's parts
    (PostgreSQL), each type's part first keeps only the rows the page can need, read in order
    from its (owner, sort) index: a first page sorts 50 rows a type instead of all of them."""
    return list(_page_union(parts, params))


def _page_union(parts: list[Any], params: ListParams) -> Any:
    order = ordering(params)
    end = params.offset + params.limit
    if len(parts) > 1 and connection.features.supports_slicing_ordering_in_compound:
        parts = [part.order_by(*order)[:end] for part in parts]
    return _union(parts).order_by(*order)[params.offset : end]


def item_lines(owner: Any, types: list[str], params: ListParams) -> list[dict[str, Any]]:
    """One page as ``{id, kind, handle, shown_title}`` rows in one query, without a count or
    tags: what an overview lists. ``handle`` is the type's ``name_field`` (a prompt's name);
    ``shown_title`` the display title every door shows (``Item.title_of``)."""
    parts = _union_parts(owner, types, params, lines=True)
    rows = _page_rows(parts, params) if parts else []
    for row in rows:
        model = item_types.model_for(row["kind"])
        row["shown_title"] = model.title_of(row.pop("title"), row.pop("fallback"))
    return rows


_ROW = ("id", "kind", "created_at", "updated_at", "last_used_at", "sort_title", "rank")


_RANKING_ROW = ("id", "kind", "created_at", "rank")  # what ordering by relevance reads


def union_rows(
    owner: Any, types: list[str], params: ListParams, *, lines: bool = False, ranking: bool = False
) -> Any:
    """The UNION of each type's filtered id/sort columns, or None when no type is left.
    ``ranking``: only the columns ordering by relevance needs (a search reads 1 000 rows: each
    timestamp costs ~20 µs to load)."""
    parts = _union_parts(owner, types, params, lines=lines, ranking=ranking)
    return _union(parts) if parts else None


def _union(parts: list[Any]) -> Any:
    return parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]


def _union_parts(
    owner: Any,
    types: list[str],
    params: ListParams,
    *,
    lines: bool = False,
    ranking: bool = False,
    now: datetime | None = None,
) -> list[Any]:
    types = [t for t in types if params.includes(t)]
    parts = []
    for type_name in types:
        model = item_types.model_for(type_name)
        qs = filtered_items(owner, model, params, now).annotate(
            kind=Value(type_name, output_field=CharField())
        )
        columns: tuple[str, ...] = _RANKING_ROW
        if not ranking:
            qs = qs.annotate(sort_title=_sort_title(model))
            columns = _ROW
        if lines:
            qs = qs.annotate(**_line_columns(model))
            columns = (*_ROW, "handle", "title", "fallback")
        parts.append(qs.values(*columns).order_by())
    return parts


def _line_columns(model: type[Item]) -> dict[str, Any]:
    none = Cast(Value(None), output_field=TextField())
    fallback = Cast(F(model.title_fallback), TextField()) if model.title_fallback else none
    handle = Cast(F(model.name_field), TextField()) if model.name_field else none
    return {"handle": handle, "fallback": fallback}


def active_tagged(owner: Any, model: type[Item], tags: list[str], tag_match: str) -> QuerySet:
    """The owner's active items of one type with ``tags`` (all or any; none = every item)."""
    qs = owned(owner, model).active()
    if tags:
        qs = qs.filter(pk__in=_tagged_ids(model, tags, tag_match))
    return qs


def active_counts(owner: Any, types: list[str]) -> dict[str, int]:
    """Active items per type: one count query per type."""
    return {t: owned(owner, item_types.model_for(t)).active().count() for t in types}


def load_rows(owner: Any, rows: list[dict[str, Any]], *, preview: bool = True) -> list[Item]:
    by_type: dict[str, list[Any]] = {}
    for row in rows:
        by_type.setdefault(row["kind"], []).append(row["id"])
    loaded: dict[Any, Item] = {}
    for type_name, ids in by_type.items():
        model = item_types.model_for(type_name)
        qs = _list_columns(owned(owner, model).filter(pk__in=ids), model, preview).prefetch_related(
            *_related(model)
        )
        loaded.update({item.pk: item for item in attach_tags(model, list(qs))})
    return [loaded[row["id"]] for row in rows if row["id"] in loaded]


def tag_counts(
    owner: Any, *, include_inactive: bool, types: list[str] | None = None
) -> list[TagCount]:
    """The owner's tags with the number of active items carrying each, in one query.

    ``types`` limits what is counted (a caller sees counts only over the areas it may read);
    tag names are the owner's shared vocabulary, listed with ``include_inactive`` whatever
    carries them. One UNION ALL of a grouped count per type (plus every tag name at 0 when
    inactive tags are wanted): a correlated count per tag and type took seconds at 10 000 items
    and 200 tags.
    """
    active = state_q(ItemState.ACTIVE, timezone.now())
    counted = item_types.type_names() if types is None else types
    parts = [_active_tag_uses(owner, item_types.model_for(name), active) for name in counted]
    if include_inactive or not parts:
        parts.append(
            Tag.objects.filter(owner=owner)
            .annotate(n=Value(0, output_field=IntegerField()))
            .values_list("name", "n")
            .order_by()
        )
    union = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
    totals: dict[str, int] = {}
    for name, n in union:
        totals[name] = totals.get(name, 0) + n
    result: list[TagCount] = [
        {"name": name, "count": n} for name, n in totals.items() if n or include_inactive
    ]
    result.sort(key=lambda t: (-t["count"], t["name"]))
    return result


def _active_tag_uses(owner: Any, model: type[Item], active: Q) -> QuerySet:
    """(tag name, active items of ``model`` carrying it) for the owner's tags in use."""
    item = str(model._meta.model_name)
    return (
        model.tags.through._default_manager.filter(
            _prefix_q(active, item), **{f"{item}__owner": owner}
        )
        .values_list("tag__name")
        .annotate(n=Count("*"))
        .order_by()
    )


def top_tags(owner: Any, types: list[str], limit: int) -> list[TagCount]:
    """The ``limit`` tags carried by most active items of ``types``."""
    return tag_counts(owner, include_inactive=False, types=types)[:limit]


def tag_types(owner: Any, name: str) -> list[str]:
    """The item types with an item (in any state) carrying the owner's tag ``name``."""
    if not rules.storable(name):
        return []
    name, found = name.strip().lower(), []
    for type_name, model in item_types.registry().items():
        through = model.tags.through._default_manager
        if through.filter(tag__owner=owner, tag__name=name).exists():
            found.append(type_name)
    return found


def _prefix_q(q: Q, prefix: str) -> Q:
    """Re-root a Q on a relation (``deleted_at`` -> ``note__deleted_at``)."""
    children: list[Q | tuple[str, Any]] = []
    for child in q.children:
        if isinstance(child, Q):
            children.append(_prefix_q(child, prefix))
        else:  # a Q's leaves are (lookup, value) pairs
            lookup, value = cast("tuple[str, Any]", child)
            children.append((f"{prefix}__{lookup}", value))
    return Q(*children, _connector=q.connector, _negated=q.negated)


def list_params(owner: Any, data: Mapping[str, Any]) -> ListParams:
    """Validated list query parameters (REST or MCP) as ``ListParams``.

    ``filter_id`` names one of the owner's saved filters (else not found): its expression and
    types narrow the list, and its sort applies unless ``sort_by`` is given.
    """
    params = ListParams(
        q=(data.get("q") or "").strip(),
        tags=rules.normalize_tags(data.get("tags") or []),
        tag_match=data["tag_match"],
        views=data.get("view") or [ItemState.ACTIVE],
        sort_by=data.get("sort_by"),
        sort_order=data["sort_order"],
        limit=data["limit"],
        offset=data["offset"],
    )
    if data.get("filter_id") is None:
        return params
    saved = get_filter(owner, data["filter_id"])
    sort: dict[str, Any] = {}
    if not params.sort_by:
        sort = {"sort_by": saved.default_sort_by, "sort_order": saved.default_sort_order}
    return replace(
        params,
        filter_groups=tuple(tuple(tags) for tags in saved.groups),
        filter_types=tuple(saved.content_types),
        **sort,
    )
