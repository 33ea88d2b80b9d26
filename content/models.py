"""Bookmarks, notes, tags, the shared item base and version history."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

import uuid6
from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from content import rules
from tiddly.errors import TiddlyError, UrlConflict
from tiddly.scopes import Area


class Tag(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid6.uuid7, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tags"
    )
    name = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="tag_unique_per_owner")
        ]

    def __str__(self) -> str:
        return self.name


class ItemState(models.TextChoices):
    ACTIVE = "active"
    ARCHIVED = "archived"
    DELETED = "deleted"


class ItemQuerySet(models.QuerySet):
    """State filters. "Archived" means archived_at has passed: a future value is a schedule."""

    def in_state(self, state: str, now: datetime | None = None) -> ItemQuerySet:
        return self.filter(state_q(state, now or timezone.now()))

    def active(self) -> ItemQuerySet:
        return self.in_state(ItemState.ACTIVE)


def state_q(state: str, now: datetime) -> Q:
    if state == ItemState.DELETED:
        return Q(deleted_at__isnull=False)
    not_archived = Q(archived_at__isnull=True) | Q(archived_at__gt=now)
    if state == ItemState.ACTIVE:
        return Q(deleted_at__isnull=True) & not_archived
    return Q(deleted_at__isnull=True, archived_at__lte=now)


class Item(models.Model):
    """What bookmarks, notes and prompts share. Ids are time-ordered UUIDv7.

    A concrete subclass *is* an item type: the class attributes below declare what differs between
    types, and ``content.item_types`` builds the registry from the subclasses Django knows, so the
    rest of the code never asks which type it holds.
    """

    type_name: ClassVar[str] = ""
    # The scope area (SPEC §8.1) whose ``:read``/``:write`` scopes govern items of this type.
    scope_area: ClassVar[Area] = "content"
    # Fields (besides content) that count as metadata for change detection and history.
    metadata_fields: ClassVar[tuple[str, ...]] = ("title", "description")
    # Type-specific fields in the item's JSON, after the common ones.
    extra_fields: ClassVar[tuple[str, ...]] = ()
    # Fields a list's ``q`` searches (as substrings; PostgreSQL also has the weighted tsvector).
    search_fields: ClassVar[tuple[str, ...]] = ("title", "description", "content")
    # What sorting by title falls back to when the title is blank.
    title_fallback: ClassVar[str | None] = None
    # A field unique per owner among live items, and the 409 raised when it clashes.
    unique_field: ClassVar[str | None] = None
    conflict_error: ClassVar[type[TiddlyError]] = TiddlyError
    # A field that addresses an *active* item by value (prompts by name), if the type has one.
    name_field: ClassVar[str | None] = None
    # Whether the content is the item's main payload, so it exports as a Markdown document.
    markdown_export: ClassVar[bool] = True

    id = models.UUIDField(primary_key=True, default=uuid6.uuid7, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="%(class)ss"
    )
    title = models.TextField(null=True, blank=True)
    description = models.TextField(null=True, blank=True)
    content = models.TextField(null=True, blank=True)
    tags = models.ManyToManyField(Tag, related_name="%(class)ss", blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(default=timezone.now, editable=False)
    archived_at = models.DateTimeField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ItemQuerySet.as_manager()

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title or str(self.id)

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def is_archived(self) -> bool:
        return (
            self.deleted_at is None
            and self.archived_at is not None
            and self.archived_at <= timezone.now()
        )

    @property
    def state(self) -> str:
        if self.is_deleted:
            return ItemState.DELETED
        return ItemState.ARCHIVED if self.is_archived else ItemState.ACTIVE

    def tag_names(self) -> list[str]:
        # Lists prefetch tags; a single item asks for just the names (no model instances).
        if "tags" in getattr(self, "_prefetched_objects_cache", {}):
            return sorted(tag.name for tag in self.tags.all())
        return sorted(self.tags.values_list("name", flat=True))

    def label(self) -> str:
        """How summaries name the item, e.g. ``note 'Groceries'``."""
        return f"{self.type_name} '{self}'"

    def apply_type_fields(self, data: Mapping[str, Any], *, creating: bool) -> None:
        """Validate, normalise and set the type's own fields from ``data`` (a create or a partial
        update: absent keys stay). Raises a ``TiddlyError`` naming the field."""

    def validate_state(self) -> None:
        """Type-specific validation of the whole new state; prompts check their template."""


def item_indexes(prefix: str) -> list[models.Index]:
    return [
        models.Index(fields=["owner", "-created_at"], name=f"{prefix}_owner_created"),
        models.Index(fields=["owner", "-updated_at"], name=f"{prefix}_owner_updated"),
        models.Index(fields=["owner", "-last_used_at"], name=f"{prefix}_owner_used"),
    ]


class Bookmark(Item):
    type_name = "bookmark"
    metadata_fields = ("title", "description", "url")
    extra_fields = ("url",)
    search_fields = ("title", "description", "content", "url")
    title_fallback = "url"
    unique_field = "url"
    conflict_error = UrlConflict
    markdown_export = False

    url = models.TextField()

    class Meta(Item.Meta):
        indexes = item_indexes("bookmark")
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "url"],
                condition=Q(deleted_at__isnull=True),
                name="bookmark_url_unique_among_live",
            )
        ]

    def __str__(self) -> str:
        return self.title or self.url

    def apply_type_fields(self, data: Mapping[str, Any], *, creating: bool) -> None:
        if creating or "url" in data:
            if data.get("url") is None:
                raise rules.invalid("url", "A bookmark's url is required and cannot be null.")
            self.url = rules.normalize_url(data["url"])


class Note(Item):
    type_name = "note"

    class Meta(Item.Meta):
        indexes = item_indexes("note")

    def apply_type_fields(self, data: Mapping[str, Any], *, creating: bool) -> None:
        if creating or "title" in data:
            rules.require_text("title", self.title, "A note's title")


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


# --- organising: saved filters and links between items -------------------------------------------


class SortKey(models.TextChoices):
    CREATED_AT = "created_at"
    UPDATED_AT = "updated_at"
    LAST_USED_AT = "last_used_at"
    TITLE = "title"


class SortOrder(models.TextChoices):
    ASC = "asc"
    DESC = "desc"


class SavedFilter(models.Model):
    """A named tag expression over some item types (SPEC §11).

    ``expression`` is ``{"groups": [{"tags": [...]}, ...], "group_operator": "or"}`` and holds tag
    *names*, the form every door shows. ``tags`` mirrors the tags the expression uses as real
    foreign keys, so "which filters use this tag" is one indexed query (deleting a used tag is a
    409) and a tag rename finds the expressions to rewrite in the same transaction.
    """

    id = models.UUIDField(primary_key=True, default=uuid6.uuid7, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_filters"
    )
    name = models.CharField(max_length=100)
    content_types = models.JSONField(default=list)
    expression = models.JSONField(default=dict)
    tags = models.ManyToManyField(Tag, related_name="saved_filters", blank=True, editable=False)
    default_sort_by = models.CharField(
        max_length=20, choices=SortKey.choices, null=True, blank=True
    )
    default_sort_order = models.CharField(
        max_length=4, choices=SortOrder.choices, default=SortOrder.DESC
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="filter_name_unique_per_owner")
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def groups(self) -> list[list[str]]:
        return [list(group.get("tags", [])) for group in self.expression.get("groups", [])]


class RelationshipQuerySet(models.QuerySet):
    def touching(self, type_name: str, item_id: Any) -> RelationshipQuerySet:
        """Links with the item at either end."""
        return self.filter(
            Q(source_type=type_name, source_id=item_id)
            | Q(target_type=type_name, target_id=item_id)
        )


class Relationship(models.Model):
    """An undirected link between two of one owner's items (SPEC §12).

    The ends are stored in a canonical order — (source_type, source_id) < (target_type,
    target_id) — so that (A, B) and (B, A) are the same row, and a unique constraint on the four
    columns makes the unordered pair unique in the database; a check constraint holds the order
    (and so also forbids a self-link).
    """

    id = models.UUIDField(primary_key=True, default=uuid6.uuid7, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="relationships"
    )
    source_type = models.CharField(max_length=10)
    source_id = models.UUIDField()
    target_type = models.CharField(max_length=10)
    target_id = models.UUIDField()
    description = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = RelationshipQuerySet.as_manager()

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["source_type", "source_id", "target_type", "target_id"],
                name="relationship_unique_pair",
            ),
            models.CheckConstraint(
                condition=Q(source_type__lt=F("target_type"))
                | Q(source_type=F("target_type"), source_id__lt=F("target_id")),
                name="relationship_ends_in_canonical_order",
            ),
        ]
        indexes = [models.Index(fields=["target_type", "target_id"], name="relationship_target")]

    def __str__(self) -> str:
        return f"{self.source_type} {self.source_id} <-> {self.target_type} {self.target_id}"

    def other_end(self, type_name: str, item_id: Any) -> tuple[str, Any]:
        if self.source_type == type_name and self.source_id == item_id:
            return self.target_type, self.target_id
        return self.source_type, self.source_id
