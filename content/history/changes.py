"""The change feed's mechanics (SPEC §17.1): recording, cursors, reading and retention.

A cursor names a position ``(xid, id)`` in the log (see ``content.models.changes``) and means
"everything at or before this position has been seen". A read hands out only *settled* rows — rows
at or before the owner's settled position, below which none of the owner's writes is still
running (on PostgreSQL: per-owner tickets, below; nothing else on the server counts) — so a row can
never commit behind a cursor already handed out: a poller that follows ``next_cursor`` sees every
change exactly once. When a read exhausts what is settled, ``next_cursor`` moves up to the settled
position itself, so an idle poller's cursor keeps up with the log (and with pruning).

Cursors are bound to their owner by an HMAC (SECRET_KEY, honouring SECRET_KEY_FALLBACKS): someone
else's cursor, or garbage, is a 400, never a read of another position of someone else's feed.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Max, Q, QuerySet
from django.utils import timezone
from django.utils.crypto import salted_hmac

from content.errors import CursorExpired
from content.models.changes import Change, ChangeAction, ChangeLogWatermark
from content.models.webhooks import WebhookDelivery
from tiddly import compiled
from tiddly.errors import ValidationFailed

_CURSOR_SALT = "tiddly.changes.cursor"
_CURSOR_VERSION = b"1"
_TAG_BYTES = 12
_MAX_CURSOR_CHARS = 200
_BIGINT = 2**63 - 1


class Position(NamedTuple):
    xid: int
    id: int


START = Position(0, 0)


def position_of(change: Change) -> Position:
    return Position(int(change.xid), int(change.id))


# --- cursors --------------------------------------------------------------------------------------


def _tag(owner_id: Any, payload: bytes, secret: Any = None) -> bytes:
    value = f"{owner_id}:".encode() + payload
    kwargs = {"secret": secret} if secret is not None else {}
    return salted_hmac(_CURSOR_SALT, value, algorithm="sha256", **kwargs).digest()[:_TAG_BYTES]


def encode_cursor(owner_id: Any, position: Position) -> str:
    payload = b"%s.%d.%d" % (_CURSOR_VERSION, position.xid, position.id)
    raw = payload + b"." + _tag(owner_id, payload)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _bad_cursor(why: str) -> ValidationFailed:
    return ValidationFailed(
        {
            "since": [
                f"{why} Pass a next_cursor (or a change's cursor) from an earlier answer of "
                "yours, or omit since to start from the oldest change kept."
            ]
        }
    )


def decode_cursor(owner_id: Any, cursor: str) -> Position:
    """The position a cursor names; a 400 for garbage or a cursor of someone else."""
    if not cursor or len(cursor) > _MAX_CURSOR_CHARS or not cursor.isascii():
        raise _bad_cursor("since is not a cursor of this feed.")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raise _bad_cursor("since is not a cursor of this feed.") from None
    parts = raw.split(b".", 3)
    if len(parts) != 4 or parts[0] != _CURSOR_VERSION:
        raise _bad_cursor("since is not a cursor of this feed.")
    payload = b".".join(parts[:3])
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    if not any(hmac.compare_digest(parts[3], _tag(owner_id, payload, s)) for s in secrets):
        raise _bad_cursor("since is a cursor of another feed (or was altered).")
    try:
        xid, change_id = int(parts[1]), int(parts[2])
    except ValueError:
        raise _bad_cursor("since is not a cursor of this feed.") from None
    if not (0 <= xid <= _BIGINT and 0 <= change_id <= _BIGINT):
        raise _bad_cursor("since is not a cursor of this feed.")
    return Position(xid, change_id)


# --- recording ------------------------------------------------------------------------------------

# History's actions (SPEC §6) as the feed names them; a version restore is an update. History
# events not listed here (e.g. sharing) are not changes.
CHANGE_OF_HISTORY_ACTION = {
    "create": ChangeAction.CREATED,
    "update": ChangeAction.UPDATED,
    "restore": ChangeAction.UPDATED,
    "archive": ChangeAction.ARCHIVED,
    "unarchive": ChangeAction.UNARCHIVED,
    "delete": ChangeAction.DELETED,
    "undelete": ChangeAction.RESTORED,
    "link": ChangeAction.LINKED,
    "unlink": ChangeAction.UNLINKED,
}
PURGED = ChangeAction.PURGED


@dataclass(frozen=True)
class ChangeRecord:
    """What one change says, before it has a position."""

    owner_id: Any
    item_type: str
    item_id: Any
    action: str
    name: str | None = None
    version: int | None = None
    changed_fields: Sequence[str] = ()
    source: str = "api"


def record_changes(records: Sequence[ChangeRecord]) -> list[Change]:
    """Append changes to the log inside the caller's transaction (they are settled when it ends)."""
    if not records:
        return []
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        with transaction.atomic():  # a ticket is only as good as the transaction holding it
            return record_changes(records)
    now = timezone.now()
    tickets = {}
    if connection.vendor == "postgresql":
        tickets = {owner: _ticket(owner) for owner in dict.fromkeys(r.owner_id for r in records)}
    rows = [
        Change(
            owner_id=r.owner_id,
            item_type=r.item_type,
            item_id=r.item_id,
            name=r.name,
            action=r.action,
            version=r.version,
            changed_fields=sorted(r.changed_fields),
            source=r.source,
            at=now,
            **({"xid": tickets[r.owner_id]} if tickets else {}),
        )
        for r in records
    ]
    if len(rows) == 1:
        compiled.insert(rows[0])
    else:
        rows = Change.objects.bulk_create(rows, batch_size=1000)
    return rows


# --- PostgreSQL: per-owner tickets ----------------------------------------------------------------
#
# A row's ``xid`` on PostgreSQL is a *ticket*: the id of a subtransaction begun only after the
# writer holds its owner's feed lock (a shared, transaction-scoped advisory lock; writers never
# wait for each other). So any ticket taken after a reader looked at the lock holders is newer
# than every transaction that had finished by then, and the ticket of a writer the reader did see
# is at least that writer's oldest xid, which the reader finds in ``pg_locks``. A reader of owner
# X therefore hands out rows below the smallest of: the snapshot's ``xmax`` and the xids of X's
# lock holders — nothing else on the server (other databases, idle sessions, other owners'
# imports) holds X's feed back. The subtransaction commits with the write, so its ticket settles
# as soon as the write commits.

_FEED_LOCK_CLASS = 0x7464  # advisory lock namespace ("td"); the second key is the owner


def _owner_key(owner_id: Any) -> int:
    """The owner's advisory-lock key (int4). Two owners sharing a key only wait for each other."""
    try:
        return int(owner_id) % 2**31
    except (TypeError, ValueError):
        return zlib.crc32(str(owner_id).encode()) % 2**31


_HELD_XIDS = (
    "SELECT pg_current_xact_id()::text::bigint, array_agg(transactionid::text) "
    "FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'transactionid'"
)


def _ticket(owner_id: Any) -> int:
    """This transaction's ticket for ``owner_id``'s changes (PostgreSQL), taken once per
    transaction and owner unless a savepoint around the first one was rolled back since."""
    key = _owner_key(owner_id)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock_shared(%s, %s), "
            "pg_current_xact_id_if_assigned()::text::bigint",
            [_FEED_LOCK_CLASS, key],
        )
        top = cursor.fetchone()[1]
        own = _own_tickets()
        stack = tuple(connection.savepoint_ids)
        cached = own.get(key) if top is not None and own.get("top") == top else None
        if cached is not None and stack[: len(cached[1])] == cached[1]:
            return int(cached[0])
        users = get_user_model()._meta.db_table
        # A subtransaction whose xid the row lock assigns, after the feed lock, read before it
        # is released: one round trip (the statements' results follow one another).
        cursor.execute(
            f'SAVEPOINT tiddly_ticket; SELECT 1 FROM "{users}" WHERE id = %s FOR KEY SHARE; '
            f"{_HELD_XIDS}; RELEASE SAVEPOINT tiddly_ticket",
            [owner_id],
        )
        cursor.nextset()
        locked = cursor.rowcount
        cursor.nextset()
        top, xids = cursor.fetchone()
        if locked < 1:  # no such user (the insert will fail): any row will do
            with transaction.atomic():
                cursor.execute(
                    "SELECT 1 FROM pg_database WHERE datname = current_database() FOR KEY SHARE"
                )
                cursor.execute(_HELD_XIDS)
                top, xids = cursor.fetchone()
    ticket = max(_widen(int(x), int(top)) for x in xids)
    if own.get("top") != top:
        own.clear()
        own.update(top=top, tickets=set())
    own[key] = (ticket, stack)
    own["tickets"].add(ticket)
    return ticket


def _own_tickets() -> dict[Any, Any]:
    """This connection's tickets in its current transaction: ``top`` (that transaction's xid),
    ``tickets`` (all it took) and, per owner key, the last one with the savepoints around it."""
    own = getattr(connection, "_tiddly_feed_tickets", None)
    if own is None:
        own = {}
        connection._tiddly_feed_tickets = own  # type: ignore[attr-defined]
    return own


def _widen(xid32: int, near: int) -> int:
    """A 32-bit xid from ``pg_locks`` as the 64-bit xid closest to ``near`` (within 2^31)."""
    back = ((near & 0xFFFFFFFF) - xid32) % 2**32
    if back >= 2**31:
        back -= 2**32
    return near - back


# --- reading --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settled:
    """How far an owner's log is settled: every row at or before ``through`` is committed or gone.

    ``own`` are the reading transaction's own tickets when it has written (PostgreSQL): its own
    uncommitted rows are visible to it and handed out too. A request that polls never writes, so
    this only matters to code that writes and reads in one transaction (tests).
    """

    through: Position
    own: tuple[int, ...] = ()


# The lock holders of one owner (or of all, when the owner is null) in this database, each with
# the xids it holds ('' while it has none yet). Read in the same statement as the snapshot,
# so after it.
_SETTLED_SQL = """SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
       pg_snapshot_xmin(pg_current_snapshot())::text::bigint,
       pg_current_xact_id_if_assigned()::text::bigint,
       ARRAY(
           WITH locks AS MATERIALIZED (
               SELECT locktype, database, classid, objid, objsubid, virtualtransaction,
                      transactionid, pid
               FROM pg_locks
           )
           SELECT coalesce(x.transactionid::text, '')
           FROM locks a LEFT JOIN locks x
             ON x.virtualtransaction = a.virtualtransaction AND x.locktype = 'transactionid'
           WHERE a.locktype = 'advisory' AND a.objsubid = 2 AND a.classid = %s
             AND (%s::bigint IS NULL OR a.objid::text::bigint = %s::bigint)
             AND a.database = (SELECT oid FROM pg_database WHERE datname = current_database())
             AND a.pid IS DISTINCT FROM pg_backend_pid()
       )
"""


# The common case in one cheap statement: when the owner's feed lock is free (taken exclusively,
# without waiting, after the snapshot and released when the statement's transaction ends), no
# write of the owner is running, so everything below the snapshot's xmax is settled. Scanning
# pg_locks costs with every lock on the server (3.4 ms beside 5 200 locks).
_FREE_SQL = """SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
       pg_try_advisory_xact_lock(%s, %s)"""


def settled(owner_id: Any = None) -> Settled:
    """How far ``owner_id``'s changes (everyone's when None) are settled. Reads must run in READ
    COMMITTED (Django's default): the rows are read in a later statement's snapshot."""
    if connection.vendor == "postgresql":
        key = None if owner_id is None else _owner_key(owner_id)
        with connection.cursor() as cursor:
            if key is not None and not connection.in_atomic_block:  # the lock ends at once
                cursor.execute(_FREE_SQL, [_FEED_LOCK_CLASS, key])
                xmax, free = cursor.fetchone()
                if free:
                    return Settled(Position(int(xmax), 0))
            cursor.execute(_SETTLED_SQL, [_FEED_LOCK_CLASS, key, key])
            xmax, xmin, top, holders = cursor.fetchone()
        bound = int(xmax)
        for xid in holders:
            # A holder whose xid is not in pg_locks yet (it is being assigned): the snapshot's
            # xmin is below it. Rare and brief; erring low only delays, never skips.
            bound = min(bound, _widen(int(xid), int(xmax)) if xid else int(xmin))
        own = _own_tickets()
        mine = tuple(sorted(own["tickets"])) if top is not None and top == own.get("top") else ()
        if mine:  # handed out now, but the cursor stays below them: more may come
            bound = min(bound, mine[0])
        # (bound, 0): every row whose ticket is below the bound; no row has id 0.
        return Settled(Position(bound, 0), mine)
    # Serialised writers: the newest id is committed and every smaller one decided.
    latest = Change.objects.aggregate(latest=Max("id"))["latest"] or 0
    return Settled(Position(0, int(latest)))


def after(position: Position) -> Q:
    return Q(xid__gt=position.xid) | Q(xid=position.xid, id__gt=position.id)


def at_or_before(position: Position) -> Q:
    return Q(xid__lt=position.xid) | Q(xid=position.xid, id__lte=position.id)


@dataclass(frozen=True)
class FeedPage:
    changes: list[Change]
    next_position: Position
    has_more: bool


def read_feed(
    *, owner_id: Any, since: Position | None, types: Sequence[str], limit: int
) -> FeedPage:
    """The owner's settled changes after ``since`` (of ``types``), oldest first, at most ``limit``.

    Raises ``CursorExpired`` when changes after ``since`` were pruned. The watermark is read after
    the rows, so a prune that lands between the two reads errs towards 410, never towards a gap.
    """
    state = settled(owner_id)
    visible = at_or_before(state.through)
    if state.own:
        visible |= Q(xid__in=state.own)
    rows: QuerySet[Change] = Change.objects.filter(visible, owner_id=owner_id, item_type__in=types)
    if since is not None:
        rows = rows.filter(after(since))
    page = list(rows.order_by("xid", "id")[: limit + 1])
    if since is not None and since < pruned_through():
        raise CursorExpired(
            "Changes after this cursor were removed by retention "
            f"(TIDDLY_CHANGES_RETENTION_DAYS = {settings.TIDDLY_CHANGES_RETENTION_DAYS}). Resync "
            "the items (list them), then poll again without since."
        )
    has_more = len(page) > limit
    page = page[:limit]
    if has_more:
        return FeedPage(page, position_of(page[-1]), True)
    candidates = [since or START, state.through]
    if page:
        candidates.append(position_of(page[-1]))
    return FeedPage(page, max(candidates), False)


def pruned_through() -> Position:
    row = ChangeLogWatermark.objects.filter(pk=1).values_list("xid", "change_id").first()
    return Position(*row) if row else START


# --- retention ------------------------------------------------------------------------------------


PRUNE_BATCH = 5000


def prune_changes(*, now: datetime | None = None, batch: int = PRUNE_BATCH) -> int:
    """Drop changes older than the retention as a prefix of the log; returns how many.

    Only settled rows go, and always a prefix in log order (up to the first row still kept), so
    "older than the oldest kept" is one position: the watermark. Each batch of ``batch`` rows is
    its own short transaction and deleted by SQL alone (no row is loaded into the process).
    """
    cutoff = (now or timezone.now()) - timedelta(days=settings.TIDDLY_CHANGES_RETENTION_DAYS)
    settled_log = Change.objects.filter(at_or_before(settled().through)).order_by("xid", "id")
    total = 0
    while True:
        with transaction.atomic():
            mark, _ = ChangeLogWatermark.objects.select_for_update().get_or_create(pk=1)
            log = _past(settled_log, Position(mark.xid, mark.change_id))
            nth = list(log.values_list("xid", "id")[batch - 1 : batch])
            last = nth or list(log.reverse().values_list("xid", "id")[:1])
            if not last:
                return total
            end = Position(*last[0])
            kept = log.filter(at_or_before(end), at__gte=cutoff).values_list("xid", "id").first()
            if kept is not None:  # the prefix ends before the first row still kept
                before = log.exclude(after(Position(kept[0], kept[1] - 1))).reverse()
                found = list(before.values_list("xid", "id")[:1])
                if not found:
                    return total
                end = Position(*found[0])
            doomed = _past(
                Change.objects.filter(at_or_before(end)), Position(mark.xid, mark.change_id)
            )
            WebhookDelivery.objects.filter(change__in=doomed.values("id")).update(change=None)
            deleted = doomed._raw_delete(doomed.db)
            if end > Position(mark.xid, mark.change_id):
                mark.xid, mark.change_id = end
                mark.save(update_fields=["xid", "change_id"])
        total += deleted
        if kept is not None or not nth:
            return total


def _past(rows: QuerySet[Change], mark: Position) -> QuerySet[Change]:
    """``rows`` after the watermark (nothing is left at or before it), on PostgreSQL as a row
    comparison the position index seeks to: the rows deleted by the batches before are dead
    index entries until a vacuum, and a scan from the log's start walked over all of them in
    every batch."""
    if connection.vendor != "postgresql":  # SQLite deletes at once, and plans this worse
        return rows
    # Unqualified: a subquery of these rows (the deliveries' update) aliases the table.
    return rows.extra(where=["(xid, id) > (%s, %s)"], params=[mark.xid, mark.id])


# --- the feed's JSON -----------------------------------------------------------------------------


def change_body(owner_id: Any, change: Change) -> dict[str, Any]:
    """One change as the feed (REST, MCP, webhooks) shows it (SPEC §17.1)."""
    body: dict[str, Any] = {
        "cursor": encode_cursor(owner_id, position_of(change)),
        "type": change.item_type,
        "id": str(change.item_id),
    }
    if change.name is not None:
        body["name"] = change.name
    body.update(
        action=change.action,
        version=change.version,
        changed_fields=list(change.changed_fields),
        source=change.source,
        at=change.at.isoformat().replace("+00:00", "Z"),
    )
    return body


def feed_body(
    *, owner_id: Any, since: str | None, types: Sequence[str], limit: int
) -> dict[str, Any]:
    """``{changes, next_cursor, has_more}`` for a raw ``since`` cursor (400/410 on a bad one)."""
    position = decode_cursor(owner_id, since) if since is not None else None
    page = read_feed(owner_id=owner_id, since=position, types=types, limit=limit)
    return {
        "changes": [change_body(owner_id, change) for change in page.changes],
        "next_cursor": encode_cursor(owner_id, page.next_position),
        "has_more": page.has_more,
    }
