"""SQLite's full-text ``q`` (SPEC §3.3, round 4): PostgreSQL's ``websearch_to_tsquery`` syntax —
every word must match, ``"quoted phrases"``, ``OR``, ``-word`` — read here and answered from each
item table's FTS5 word index (``"{table}_words"``, content/migrations/0016 and
prompts/migrations/0006: porter stems, case and accents folded, the whole content in pieces).

A query is a conjunction of clauses; a clause is one term or terms joined by ``OR``; a term is a
word or a phrase (a quoted text, or an unquoted token whose words are joined by punctuation, as
``my_func`` or ``kube-ctl``: PostgreSQL makes those a phrase too), maybe negated with ``-``.
A term of English stop words only is dropped as PostgreSQL's ``english`` configuration drops
them, so the same query finds the same items on both databases (stemming aside); a query left
with none finds nothing.

An item's content is indexed in pieces, one FTS row each, so each clause is looked up on its own
(any of the item's rows may hold it) and the clauses' item keys are intersected: "restic prune"
finds a note with "restic" on its first line and "prune" on its 90 000th.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from django.db import OperationalError, connection
from django.db.models.expressions import RawSQL

from content.models import Item

#: rowid = item key * PIECES + piece number (the migrations' constant).
PIECES = 4_096
#: PostgreSQL's text search configuration: ``english`` with ``unaccent`` (content migration 0017).
CONFIG = "tiddly_english"

#: PostgreSQL's english.stop (tsearch_data), which ``websearch_to_tsquery('english', …)`` drops.
STOP_WORDS = frozenset(
    [
        "i",
        "me",
        "my",
        "myself",
        "we",
        "our",
        "ours",
        "ourselves",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "her",
        "hers",
        "herself",
        "it",
        "its",
        "itself",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "what",
        "which",
        "who",
        "whom",
        "this",
        "that",
        "these",
        "those",
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "doing",
        "a",
        "an",
        "the",
        "and",
        "but",
        "if",
        "or",
        "because",
        "as",
        "until",
        "while",
        "of",
        "at",
        "by",
        "for",
        "with",
        "about",
        "against",
        "between",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "to",
        "from",
        "up",
        "down",
        "in",
        "out",
        "on",
        "off",
        "over",
        "under",
        "again",
        "further",
        "then",
        "once",
        "here",
        "there",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "so",
        "than",
        "too",
        "very",
        "s",
        "t",
        "can",
        "will",
        "just",
        "don",
        "should",
        "now",
    ]
)

_TOKENS = re.compile(r'(-?)"([^"]*)"?|(\S+)')
_WORDS = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Term:
    words: tuple[str, ...]  # one word, or a phrase
    negated: bool = False

    def fts(self) -> str:
        """The term as an FTS5 string (a quoted string is a phrase; its words have no quote)."""
        return '"' + " ".join(self.words) + '"'


Clause = tuple[Term, ...]  # OR-ed


def parse(q: str) -> list[Clause]:
    """``q``'s clauses (AND-ed), stop words dropped; [] when nothing searchable is left."""
    clauses: list[list[Term]] = []
    join_next = False
    for match in _TOKENS.finditer(q):
        sign, quoted, bare = match.groups()
        if bare is not None and bare.lower() == "or":
            join_next = bool(clauses)
            continue
        negated = bool(sign)
        text = quoted
        if bare is not None:
            negated = bare.startswith("-") and len(bare) > 1
            text = bare[1:] if negated else bare
        words = tuple(_WORDS.findall(text or ""))
        if all(w.lower() in STOP_WORDS for w in words):
            continue  # (SQLite indexes stop words: a phrase keeps its own)
        term = Term(words, negated)
        if join_next and clauses:
            clauses[-1].append(term)
        else:
            clauses.append([term])
        join_next = False
    return [tuple(c) for c in clauses]


def _match(table: str, terms: tuple[Term, ...], column: str = "") -> tuple[str, list[str]]:
    """The item keys whose rows match any of ``terms`` (positive ones), optionally in one
    column only."""
    expression = " OR ".join(t.fts() for t in terms)
    if column:
        expression = f"{{{column}}} : ({expression})"
    return (
        f'SELECT rowid / {PIECES} FROM "{table}_words" WHERE "{table}_words" MATCH %s',
        [expression],
    )


def _clause(table: str, clause: Clause) -> tuple[str, list[str]]:
    positive = tuple(t for t in clause if not t.negated)
    negative = [t for t in clause if t.negated]
    if not negative:
        return _match(table, positive)
    # "a OR -b": any key holding a, or not holding b (rare; PostgreSQL allows it).
    parts, params = [], []
    if positive:
        sql, args = _match(table, positive)
        parts.append(f"key IN ({sql})")
        params += args
    for term in negative:
        sql, args = _match(table, (Term(term.words),))
        parts.append(f"key NOT IN ({sql})")
        params += args
    return f'SELECT key FROM "{table}_search_key" WHERE ' + " OR ".join(parts), params


def hits_sql(table: str, clauses: list[Clause]) -> tuple[str, list[str]]:
    """The ids (all owners': the caller keeps its own) of the items matching every clause."""
    selects: list[tuple[str, list[str]]] = []
    excepts: list[tuple[str, list[str]]] = []
    for clause in clauses:
        if len(clause) == 1 and clause[0].negated:
            excepts.append(_match(table, (Term(clause[0].words),)))
        else:
            selects.append(_clause(table, clause))
    if not selects:  # only "-word"s: everything else
        selects.append((f'SELECT key FROM "{table}_search_key"', []))
    sql = " INTERSECT ".join(s for s, _ in selects)
    if excepts:
        sql += " EXCEPT " + " EXCEPT ".join(s for s, _ in excepts)
    params = [p for _, args in (*selects, *excepts) for p in args]
    return f'SELECT id FROM "{table}_search_key" WHERE key IN ({sql})', params


#: Relevance of a hit (as PostgreSQL's ts_rank weighs A, B and C): a query word in the title,
#: in the description, anywhere.
WEIGHTS = (("title", 1.0), ("description", 0.4))
ANYWHERE = 0.2


def positive_terms(clauses: list[Clause]) -> tuple[Term, ...]:
    return tuple(t for c in clauses for t in c if not t.negated)


def column_hits_sql(table: str, terms: tuple[Term, ...], column: str) -> tuple[str, list[str]]:
    """The ids of items with any of ``terms`` in ``column`` (title or description)."""
    sql, params = _match(table, terms, column)
    return f'SELECT id FROM "{table}_search_key" WHERE key IN ({sql})', params


# --- PostgreSQL: the word pieces of long contents (content migrations 0017, 0028, 0029) ------
#
# A phrase is looked up in the pieces (its words' positions); a single word in the word sets
# (``"{table}_word_sets"``: the distinct lexemes of ten blocks, an array), where a common word
# is one row per ten blocks, not one per block.


def _tsquery(terms: list[Term] | tuple[Term, ...]) -> tuple[str, list[str]]:
    """Any of ``terms`` (words or phrases) as one tsquery expression."""
    parts = [f"phraseto_tsquery('{CONFIG}', %s)" for _ in terms]
    return "(" + " || ".join(parts) + ")", [" ".join(t.words) for t in terms]


def _lexemes(terms: list[Term]) -> tuple[str, list[str]]:
    """The lexemes of ``terms`` (single words) as one text array."""
    parts = [f"tsvector_to_array(to_tsvector('{CONFIG}', %s))" for _ in terms]
    return "(" + " || ".join(parts) + ")", [t.words[0] for t in terms]


def _in_sets(table: str, lexemes: str) -> str:
    return f'SELECT item_id FROM "{table}_word_sets" WHERE lexemes && {lexemes}'


def _in_pieces(table: str, tsquery: str) -> str:
    return f'SELECT item_id FROM "{table}_words" WHERE vector @@ {tsquery}'


def _holding_any(table: str, terms: list[Term] | tuple[Term, ...]) -> tuple[str, list[str]]:
    """The ids of the items whose content's pieces hold any of ``terms``: a superset of the
    exact answer when a single word's lexemes are more than one (they are each looked up). No
    terms (a query of ``-word``s only): every item that has pieces (each has a first one)."""
    if not terms:
        return f'SELECT item_id FROM "{table}_words" WHERE block = 0 AND part = 0', []
    words = [t for t in terms if len(t.words) == 1]
    phrases = [t for t in terms if len(t.words) > 1]
    selects, params = [], []
    if words:
        lexemes, args = _lexemes(words)
        selects.append(_in_sets(table, lexemes))
        params += args
    if phrases:
        tsquery, args = _tsquery(phrases)
        selects.append(_in_pieces(table, tsquery))
        params += args
    return " UNION ALL ".join(selects), params


def _holding(table: str, term: Term) -> tuple[str, list[str]]:
    """The ids of the items whose content's pieces hold ``term``, exactly: a word whose text
    PostgreSQL parses into more than one lexeme (a phrase) is looked up in the pieces."""
    tsquery, args = _tsquery([term])
    if len(term.words) > 1:
        return _in_pieces(table, tsquery), args
    lexemes, words = _lexemes([term])
    # The two numnode() tests are constants: the planner keeps one of the two scans.
    return (
        f"{_in_sets(table, lexemes)} AND numnode({tsquery}) < 2 UNION ALL "
        f"{_in_pieces(table, tsquery)} AND numnode({tsquery}) > 1",
        [*words, *args, *args, *args],
    )


def postgres_deep_candidates(table: str, clauses: list[Clause]) -> tuple[str, list[Any]] | None:
    """PostgreSQL: the ids of an owner's items whose word pieces hold any positive term of
    ``clauses`` (the owner's id is the first parameter, before those returned): the few items
    ``postgres_deep_hits`` then checks. With only ``-word``s, every long item of the owner's.
    None when the query has no term."""
    if not clauses:
        return None
    holding, args = _holding_any(table, positive_terms(clauses))
    return (
        f'SELECT t.id FROM "{table}" t WHERE t.owner_id = %s AND t.id IN ({holding})',
        args,
    )


def postgres_deep_hits(
    table: str, clauses: list[Clause], within: list[Any] | None = None, owner: Any = None
) -> tuple[str, list[Any]] | None:
    """PostgreSQL: the ids of the items with a content longer than ``search_vector`` holds that
    match every clause in their short fields or anywhere in their content's word pieces
    (``"{table}_words"``, ``"{table}_word_sets"``): each clause on its own, so "restic prune"
    finds "restic" on line 1 and "prune" on line 90 000. ``within``: only these ids are checked
    (``postgres_deep_candidates`` found them), else ``owner``'s items (every owner's without
    one) with a piece holding any term. None when the query has no term."""
    if not clauses:
        return None
    positives = positive_terms(clauses)

    conditions: list[str] = []
    params: list[str] = []
    for clause in clauses:
        parts = []
        positive = [t for t in clause if not t.negated]
        groups = [(positive, "")] if positive else []
        groups += [([t], "NOT ") for t in clause if t.negated]
        for terms, negation in groups:
            tsquery, args = _tsquery(terms)
            holding = [_holding(table, t) for t in terms]
            parts.append(
                f"{negation}(t.search_head @@ {tsquery} OR t.id IN "
                f"({' UNION ALL '.join(sql for sql, _ in holding)}))"
            )
            params += args + [p for _, more in holding for p in more]
        conditions.append("(" + " OR ".join(parts) + ")")
    if within is not None:
        sql = f'SELECT t.id FROM "{table}" t WHERE t.id = ANY(%s) AND ' + " AND ".join(conditions)
        return sql, [within, *params]
    driving, args = _holding_any(table, positives)
    # Owner first: the clauses (a query of "-word"s checks every long item) run on its items only.
    mine, of = ("t.owner_id = %s AND ", [owner]) if owner is not None else ("", [])
    where = " AND ".join([f"{mine}t.id IN ({driving})", *conditions])
    return f'SELECT t.id FROM "{table}" t WHERE {where}', [*of, *args, *params]


# --- the trigram index of the short fields and the content's opening (migration 0011) ----------


def glob_pattern(q: str) -> str:
    """``*q*`` for GLOB on a lowercased column, ``q``'s own ``*``, ``?`` and ``[`` literal. GLOB,
    not LIKE: a LIKE with an ESCAPE clause is not handed to FTS5, and would scan."""
    return "*" + re.sub(r"([*?\[])", r"[\1]", q.lower()) + "*"


def _substring(table: str, q: str) -> tuple[str, list[str]]:
    """The index rows (alias ``f``) whose head or opening holds ``q``: from 3 characters a phrase
    of its trigrams (the index has their positions, content migration 0020), answered without
    reading a row; shorter, GLOB on both columns (FTS5 cannot narrow it: a scan)."""
    if len(q) >= 3:
        phrase = '"' + q.lower().replace('"', '""') + '"'
        return f'"{table}_search" MATCH %s', ["{head opening} : " + phrase]
    return "(f.head GLOB %s OR f.opening GLOB %s)", [glob_pattern(q)] * 2


def _index_select(table: str, what: str, q: str, *, join: str = "") -> tuple[str, list[str]]:
    # CROSS JOIN keeps SQLite to that order (the index first, then keys by primary key); its
    # planner would otherwise scan the keys and probe the index with each.
    where, params = _substring(table, q)
    return (
        f'SELECT {what} FROM "{table}_search" f CROSS JOIN "{table}_search_key" k '
        f"ON k.key = f.rowid{join} WHERE {where}",
        params,
    )


def indexed_hits(model: type[Item], q: str) -> RawSQL:
    """SQLite: the ids of items whose short fields or content's opening hold ``q``
    (case-insensitively; the caller keeps the owner's), from the FTS5 trigram index of
    ``content.dbops.sqlite_opening_sql``."""
    return RawSQL(*_index_select(model._meta.db_table, "k.id", q))


def indexed_occurs(owner: Any, model: type[Item], word: str, *, budget_ms: float) -> bool:
    """SQLite: whether ``word`` is a word of any of the owner's items (the word index: the whole
    content; stems too — a word that matches by its stem needs no correction) or a substring of
    their short fields or content's opening (the trigram index): the first hit of the owner's
    ends it, however common the word. Past ``budget_ms`` the lookup stops and the word counts
    as found."""
    table = model._meta.db_table
    owned = f' CROSS JOIN "{table}" t ON t.id = k.id AND t.owner_id = %s'
    words = (
        f'SELECT 1 FROM "{table}_words" w CROSS JOIN "{table}_search_key" k '
        f'ON k.key = w.rowid / {PIECES}{owned} WHERE "{table}_words" MATCH %s'
    )
    trigrams, trigram_params = _index_select(table, "1", word, join=owned)
    params = [owner.pk, Term(tuple(_WORDS.findall(word)) or (word,)).fts()]
    deadline = time.monotonic() + budget_ms / 1000
    connection.ensure_connection()
    raw = connection.connection
    # A short word makes SQLite GLOB every opening: past the budget the lookup stops (as the
    # PostgreSQL lookup's statement timeout does).
    raw.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                f"{words} UNION ALL {trigrams} LIMIT 1", [*params, owner.pk, *trigram_params]
            )
            return cursor.fetchone() is not None
    except OperationalError:  # interrupted at the budget
        return True
    finally:
        raw.set_progress_handler(None, 0)


def indexed_opening(model: type[Item], pk: Any) -> tuple[str, str] | None:
    """SQLite: an item's content opening, lowercased and as written, from its index row
    (reading a prefix of a large content from the table would read all of it)."""
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT f.opening, f.raw FROM "{table}_search_key" k CROSS JOIN "{table}_search" f '
            "ON f.rowid = k.key WHERE k.id = %s",
            [model._meta.pk.get_db_prep_value(pk, connection)],
        )
        row = cursor.fetchone()
    return (row[0] or "", row[1] or "") if row else None
