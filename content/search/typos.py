"""Typo tolerance (SPEC §16): a word of 5+ letters found in none of the owner's items is replaced
by its nearest word from their titles, descriptions and tags (and, on PostgreSQL with pg_trgm, from
their contents' openings)."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import OperationalError, connection, transaction
from django.db.models import Q
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from content import item_types
from content.dbops import OPENING_COLUMN
from content.queries import fulltext
from content.queries import lists as queries
from content.queries.vocabulary import visible_tag_names

_WORDS = re.compile(r"\w+")

logger = logging.getLogger(__name__)


def tolerant_query(owner: Any, types: list[str], q: str, *, whole_content: bool = True) -> str:
    """Typo tolerance: a word of 5+ letters found in none of the owner's items is replaced by its
    nearest word (one edit, or trigram-like similarity >= 0.5) from their titles, descriptions and
    tags (keyword mode on PostgreSQL: and their contents' openings). Costs a query only when a
    word is missing, which a correct query never is.

    Bounded (SPEC §16, round 4): at most ``TYPO_WORDS`` words of a query are checked, every
    lookup is on an index (the full-text index and the trigram index of the short fields and
    the content's opening: never a scan of whole contents), and all of a query's lookups share
    ``TYPO_MS`` — past it the words left stay as written (a 500-character ``q`` costs what a
    short one does). ``whole_content=False`` (hybrid's keyword leg, PostgreSQL): near words
    come from the short fields and tags only."""
    out = q
    deadline = time.monotonic() + TYPO_MS / 1000
    candidates = [w for w in dict.fromkeys(_WORDS.findall(q)) if len(w) >= 5 and w.isalpha()]
    for word in candidates[:TYPO_WORDS]:
        left_ms = (deadline - time.monotonic()) * 1000
        if left_ms < 1:
            logger.info("typo checks over %s ms: %r and later words left as written", TYPO_MS, word)
            break
        if _occurs(owner, types, word, budget_ms=min(left_ms, OCCURS_MS)):
            continue
        near = _nearest_word(
            owner, types, word.lower(), in_content=whole_content, deadline=deadline
        )
        if near is not None:
            out = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", near, out)
    return out


TYPO_WORDS = 8  # the most words of one query checked for typos
TYPO_MS = 200  # the time all of one query's typo lookups share
OCCURS_MS = 10  # time budget of one word's lookup in one type


def _occurs(owner: Any, types: list[str], word: str, *, budget_ms: float = OCCURS_MS) -> bool:
    """``word`` occurs in any of the owner's items of ``types``: as a word of the full-text index
    (whole contents; a stemmed match needs no correction: the query matches already), or as
    written in the short fields or the content's indexed opening (the trigram indexes). Each
    lookup stops at ``budget_ms`` — a word whose trigrams are common but which occurs nowhere
    makes an index recheck many openings; past the budget the word counts as found."""
    for type_name in types:
        model = item_types.model_for(type_name)
        if not queries.uses_fts():  # SQLite: one lookup of both indexes
            if fulltext.indexed_occurs(owner, model, word, budget_ms=budget_ms):
                return True
            continue
        qs, condition = queries.substring_q(
            queries.owned(owner, model), model, word, whole_content=False
        )
        condition |= queries.fts_q(model, word)
        try:
            with _budget(max(int(budget_ms), 1)):
                # One EXISTS per field, cheapest first: each stops at its first hit and each
                # can use its own index, which one OR of them all cannot.
                if any(qs.filter(part).exists() for part in _parts(condition)):
                    return True
        except OperationalError:  # cancelled at the budget (QueryCanceled)
            return True
    return False


@contextmanager
def _budget(ms: int, **settings: str) -> Iterator[Any]:
    """PostgreSQL: a savepoint whose statements are cancelled after ``ms`` (``OperationalError``
    then; the savepoint is rolled back alone, the caller's transaction stays usable), with
    ``settings`` (configuration parameters) set for it alone."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('statement_timeout')")
        (before,) = cursor.fetchone()
        _set(cursor, {"statement_timeout": f"{ms}ms", **settings})
        yield cursor
        # A released savepoint keeps what SET LOCAL did until its transaction ends: put the
        # timeout back, so the caller's later statements are not on this budget. (A rolled-back
        # one restores it itself.)
        _set(cursor, {"statement_timeout": before})


def _set(cursor: Any, values: dict[str, str]) -> None:
    cursor.execute(
        "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in values),
        [v for pair in values.items() for v in pair],
    )


def _parts(condition: Q) -> list[Q]:
    """The OR-ed parts of ``condition`` (a single condition is its own part)."""
    if condition.connector == Q.OR and len(condition.children) > 1 and not condition.negated:
        return [c if isinstance(c, Q) else Q(c) for c in condition.children]
    return [condition]


def _nearest_word(
    owner: Any, types: list[str], word: str, *, in_content: bool = True, deadline: float = 0.0
) -> str | None:
    vocabulary = set(_short_field_words(owner, types))
    vocabulary.update(
        w.lower() for name in visible_tag_names(owner, types) for w in _WORDS.findall(name)
    )
    near = _nearest_in(word, vocabulary)
    if near is None and in_content and queries.uses_fts():
        # The content's words only when the short fields have none near: that lookup reads
        # whole openings (up to 100 000 characters each) and costs tenths of a second.
        left_ms = int((deadline - time.monotonic()) * 1000) if deadline else CONTENT_WORDS_MS
        if left_ms >= 1:
            near = _nearest_in(
                word, _content_words(owner, types, word, min(left_ms, CONTENT_WORDS_MS))
            )
    return near


_VOCABULARIES = 8  # owners' title/description vocabularies kept per process
_vocabularies: OrderedDict[tuple[Any, tuple[str, ...]], tuple[Any, frozenset[str]]] = OrderedDict()
_vocabularies_lock = threading.Lock()


def clear() -> None:
    with _vocabularies_lock:
        _vocabularies.clear()


def _short_field_words(owner: Any, types: list[str]) -> frozenset[str]:
    """The words of the titles and descriptions of the owner's items of ``types``, kept per
    process while the items' count and latest ``updated_at`` stay the same (two index reads a
    type): reading and splitting 10 000 titles and descriptions costs ~90 ms a search."""
    key = (owner.pk, tuple(types))
    version = tuple(
        (
            owned.count(),  # counted on an index, the latest read from the owner's index
            owned.order_by("-updated_at").values_list("updated_at", flat=True).first(),
        )
        for owned in (queries.owned(owner, item_types.model_for(t)) for t in types)
    )
    with _vocabularies_lock:
        cached = _vocabularies.get(key)
        if cached is not None and cached[0] == version:
            _vocabularies.move_to_end(key)
            return cached[1]
    words: set[str] = set()
    for type_name in types:
        rows = queries.owned(owner, item_types.model_for(type_name)).values_list(
            "title", "description"
        )
        for title, description in rows:
            words.update(_WORDS.findall(f"{title or ''} {description or ''}".lower()))
    vocabulary = frozenset(words)
    with _vocabularies_lock:
        _vocabularies[key] = (version, vocabulary)
        while len(_vocabularies) > _VOCABULARIES:
            _vocabularies.popitem(last=False)
    return vocabulary


def _nearest_in(word: str, vocabulary: set[str]) -> str | None:
    best: tuple[float, str] | None = None
    for candidate in vocabulary:
        if len(candidate) < 4 or abs(len(candidate) - len(word)) > 2:
            continue
        close = Levenshtein.distance(word, candidate, score_cutoff=1) <= 1
        similarity = fuzz.ratio(word, candidate) / 100
        if (close or similarity >= 0.8) and (best is None or similarity > best[0]):
            best = (similarity, candidate)
    return best[1] if best else None


CONTENT_ITEMS = 20  # items whose content is searched for a near word
CONTENT_WORDS_MS = 150  # time budget of that search
WORD_SIMILARITY = 0.5


def _content_words(owner: Any, types: list[str], word: str, budget_ms: int) -> set[str]:
    """PostgreSQL: the words near ``word`` in the content (its indexed opening) of the items
    whose content has a word trigram-similar to it (pg_trgm ``<%``, word_similarity >= 0.5, on
    the GIN trigram index: ``text %> word`` is its indexable form); the caller keeps the
    nearest. Best effort within ``CONTENT_WORDS_MS``: similarity is computed over whole
    openings (up to 100 000 characters each), so a common trigram set can cost tenths of a
    second — past the budget the query is cancelled and the typo is looked up without them."""
    found: set[str] = set()
    try:
        with _budget(
            budget_ms, **{"pg_trgm.word_similarity_threshold": str(WORD_SIMILARITY)}
        ) as cursor:
            _near_content_words(cursor, owner, types, word, found)
    except OperationalError:  # cancelled at the budget (QueryCanceled)
        logger.info("typo lookup in content over %s ms for %r: skipped", budget_ms, word)
    return found


def _near_content_words(
    cursor: Any, owner: Any, types: list[str], word: str, found: set[str]
) -> None:
    for type_name in types:
        table = item_types.model_for(type_name)._meta.db_table
        cursor.execute(
            f"""SELECT DISTINCT w FROM (
                SELECT regexp_split_to_table(text, '[^[:alnum:]_]+') AS w FROM (
                    SELECT {OPENING_COLUMN} AS text FROM "{table}"
                    WHERE owner_id = %s AND {OPENING_COLUMN} %%> %s LIMIT %s
                ) AS near_items
            ) AS words
            WHERE length(w) BETWEEN %s AND %s AND similarity(w, %s) >= 0.3""",
            [owner.pk, word, CONTENT_ITEMS, max(len(word) - 2, 4), len(word) + 2, word],
        )
        found.update(w for (w,) in cursor.fetchall())
