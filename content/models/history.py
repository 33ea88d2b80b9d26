"""History rows: one per version or event of an item (SPEC §7)."""

from __future__ import annotations

import uuid6
from django.conf import settings
from django.db import models
from django.utils import timezone


class HistoryAction(models.TextChoices):
    CREATE = "create"
    UPDATE = "update"
    RESTORE = "restore"
    ARCHIVE = "archive"
    UNARCHIVE = "unarchive"
    DELETE = "delete"
    UNDELETE = "undelete"
    # A link to another item was made or removed (SPEC §12): an event on both ends.
    LINK = "link"
    UNLINK = "unlink"
    # A public share link was created (or rotated) or removed (SPEC §17.4).
    SHARE = "share"
    UNSHARE = "unshare"


VERSIONED_ACTIONS = (HistoryAction.CREATE, HistoryAction.UPDATE, HistoryAction.RESTORE)


class ItemVersion(models.Model):
    """One history record for a bookmark, note or prompt.

    Versioned rows (create/update/restore) number 1, 2, 3… per item. The item row holds the newest
    content; each versioned row stores a *reverse* patch that turns its content into the previous
    version's, and occasionally a full snapshot, so history costs the size of the edits rather than
    a copy of the document per version. State events (archive, delete, …) have no version number.
    """

    id = models.UUIDField(primary_key=True, default=uuid6.uuid7, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="item_versions"
    )
    item_type = models.CharField(max_length=10)
    item_id = models.UUIDField()
    version = models.PositiveIntegerField(null=True, blank=True)
    action = models.CharField(max_length=10, choices=HistoryAction.choices)
    changed_fields = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    content_patch = models.TextField(null=True, blank=True)
    content_snapshot = models.TextField(null=True, blank=True)
    # True when this version's content is null (a patch can't express None).
    content_is_null = models.BooleanField(default=False)
    source = models.CharField(max_length=40, default="api")
    token_prefix = models.CharField(max_length=12, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["item_type", "item_id", "version"], name="item_version_unique"
            )
        ]
        indexes = [
            models.Index(fields=["item_type", "item_id", "-created_at"], name="version_item_time"),
            models.Index(fields=["owner", "-created_at"], name="version_owner_time"),
        ]

    def __str__(self) -> str:
        return f"{self.item_type} {self.item_id} v{self.version or '-'} {self.action}"
