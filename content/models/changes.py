"""The change log (SPEC §17.1): one row per change of an item, read by the change feed.

Order: a row's position is ``(xid, id)``. On PostgreSQL ``xid`` is a ticket: the id of a
subtransaction the writer begins once it holds its owner's feed lock (``content.history.changes``;
the column default, the writing transaction's id, serves only rows written some other way) and
``id`` a serial; a feed hands out only rows whose ticket lies below the owner's settled point —
below every ticket the owner's open writes can still take — so no row can later appear *before* a
position a poller already holds, however the writers interleave and in whatever order they commit.
On SQLite writes are serialised (IMMEDIATE transactions), ids are allocated in commit order and
``xid`` is 0.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.sql.compiler import SQLCompiler
from django.utils import timezone


class TransactionId(models.Func):
    """The current top-level transaction id as a bigint (0 where writes are serialised).

    ``xid8`` is cast through text: a bigint orders and indexes plainly and holds any xid8 a cluster
    will reach (epoch * 2^32 + xid).
    """

    output_field = models.BigIntegerField()

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, list[Any]]:
        return "0", []

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, list[Any]]:
        return "(pg_current_xact_id()::text::bigint)", []


class ChangeAction(models.TextChoices):
    CREATED = "created"
    UPDATED = "updated"
    ARCHIVED = "archived"
    UNARCHIVED = "unarchived"
    DELETED = "deleted"  # moved to trash
    RESTORED = "restored"  # taken out of trash
    PURGED = "purged"  # deleted permanently
    LINKED = "linked"
    UNLINKED = "unlinked"


class Change(models.Model):
    id = models.BigAutoField(primary_key=True)
    xid = models.BigIntegerField(db_default=TransactionId(), editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="changes"
    )
    item_type = models.CharField(max_length=10)
    item_id = models.UUIDField()
    # Prompts are addressed by name; kept as it was at the change (a purge has no item to ask).
    name = models.CharField(max_length=100, null=True, blank=True)
    action = models.CharField(max_length=12, choices=ChangeAction.choices)
    version = models.PositiveIntegerField(null=True, blank=True)
    changed_fields = models.JSONField(default=list, blank=True)
    source = models.CharField(max_length=40, default="api")
    at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["xid", "id"]
        indexes = [
            models.Index(fields=["owner", "xid", "id"], name="change_owner_position"),
            models.Index(fields=["xid", "id"], name="change_position"),
            models.Index(fields=["at"], name="change_at"),
        ]

    def __str__(self) -> str:
        return f"{self.item_type} {self.item_id} {self.action}"


class ChangeLogWatermark(models.Model):
    """The position up to which changes were pruned (one row, pk 1): a cursor below it missed
    pruned changes and is expired (410)."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    xid = models.BigIntegerField(default=0)
    change_id = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"pruned through ({self.xid}, {self.change_id})"
