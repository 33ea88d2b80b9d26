"""The change feed's mechanics (SPEC §17.1): recording, cursors, reading and retention.

A cursor names a position ``(xid, id)`` in the log (see ``content.changes_models``) and means
"everything at or before this position has been seen". A read hands out only *settled* rows — rows
at or before the settled position, below which no transaction is still running — so a row can
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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Q, QuerySet
from django.utils import timezone
from django.utils.crypto import salted_hmac

from content.errors import CursorExpired
from content.models.changes import Change, ChangeAction, ChangeLogWatermark
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
    now = timezone.now()
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
        )
        for r in records
    ]
    if len(rows) == 1:
        rows[0].save(force_insert=True)
    else:
        rows = Change.objects.bulk_create(rows, batch_size=1000)
    return rows


# --- reading --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settled:
    """How far the log is settled: every row at or before ``through`` is committed or gone.

    ``own_xid`` is the reading transaction's own id when it has written (PostgreSQL): its own
    uncommitted rows are visible to it and handed out too. A request that polls never writes, so
    this only matters to code that writes and reads in one transaction (tests).
    """

    through: Position
    own_xid: int | None = None


def settled() -> Settled:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint, "
                "pg_current_xact_id_if_assigned()::text::bigint"
            )
            xmin, own = cursor.fetchone()
        # (xmin, 0): every row of a transaction below xmin; no row has id 0.
        return Settled(Position(int(xmin), 0), int(own) if own is not None else None)
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
    state = settled()
    visible = at_or_before(state.through)
    if state.own_xid is not None:
        visible |= Q(xid=state.own_xid)
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


def prune_changes(*, now: datetime | None = None) -> int:
    """Drop changes older than the retention as a prefix of the log; returns how many.

    Only settled rows go, and always a prefix in log order, so "older than the oldest kept" is one
    position: the watermark.
    """
    cutoff = (now or timezone.now()) - timedelta(days=settings.TIDDLY_CHANGES_RETENTION_DAYS)
    through = settled().through
    last = (
        Change.objects.filter(at_or_before(through), at__lt=cutoff)
        .order_by("-xid", "-id")
        .values_list("xid", "id")
        .first()
    )
    if last is None:
        return 0
    boundary = Position(*last)
    with transaction.atomic():
        mark, _ = ChangeLogWatermark.objects.select_for_update().get_or_create(pk=1)
        deleted, _ = Change.objects.filter(at_or_before(boundary)).delete()
        if boundary > Position(mark.xid, mark.change_id):
            mark.xid, mark.change_id = boundary
            mark.save(update_fields=["xid", "change_id"])
    return deleted


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
