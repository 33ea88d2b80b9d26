"""The item base, bookmarks, notes and tags: what every item type shares."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar, cast
from urllib.parse import urlsplit

import uuid6
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from content import rules
from content.errors import UrlConflict
from tiddly import compiled
from tiddly.errors import TiddlyError
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
    # Whether the content is a template, shown as written (a prompt's), not rendered Markdown.
    content_is_template: ClassVar[bool] = False
    # How an imported entry finds the item it is (SPEC §14), tried in order: "id" is the id in
    # a Tiddly JSON export; a field name matches its value among the owner's live items.
    import_keys: ClassVar[tuple[str, ...]] = ("id",)

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

    def display_title(self) -> str | None:
        """How every door names the item (SPEC §9: the library, the admin, related items,
        exports, the MCP overview): its title, else what its type falls back to."""
        fallback = self.title_fallback
        return self.title_of(self.title, getattr(self, fallback, None) if fallback else None)

    @classmethod
    def title_of(cls, title: str | None, fallback: str | None) -> str | None:
        """``display_title`` from the two values it reads (a list that selected only those):
        the title, else ``untitled_name`` of the ``title_fallback`` field's value."""
        return (title or "").strip() or cls.untitled_name(fallback)

    @classmethod
    def untitled_name(cls, fallback: str | None) -> str | None:
        return fallback or None

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

    #: Set by ``queries.lists.attach_tags`` (lists, the exporter): the tag names of many items
    #: fetched in one query.
    prefetched_tag_names: list[str] | None = None
    #: Set by ``create_item``: a new item has no share link, so its answer needs no lookup.
    known_unshared: bool = False

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        # What the instance knew without a query may no longer hold.
        self.prefetched_tag_names = None
        self.known_unshared = False
        super().refresh_from_db(*args, **kwargs)

    def tag_names(self) -> list[str]:
        if self.prefetched_tag_names is not None:
            return sorted(self.prefetched_tag_names)
        # Lists prefetch tags; a single item asks for just the names (no model instances), by
        # SQL compiled once per type.
        if "tags" in getattr(self, "_prefetched_objects_cache", {}):
            return sorted(tag.name for tag in self.tags.all())
        names = compiled.Shaped(Tag, ("tag names", type(self)), self._tag_names, (self.pk,))
        return sorted(compiled.flat(names))

    @classmethod
    def _tag_names(cls, pk: uuid.UUID) -> models.QuerySet:
        related = cast(models.ManyToManyField, cls._meta.get_field("tags")).related_query_name()
        return Tag.objects.filter(**{related: pk}).values_list("name", flat=True)

    def label(self) -> str:
        """How summaries name the item, e.g. ``note 'Groceries'``."""
        return f"{self.type_name} '{self}'"

    def apply_type_fields(self, data: Mapping[str, Any], *, creating: bool) -> None:
        """Validate, normalise and set the type's own fields from ``data`` (a create or a partial
        update: absent keys stay). Raises a ``TiddlyError`` naming the field."""

    def validate_state(self) -> None:
        """Type-specific validation of the whole new state; prompts check their template."""


def unique_among_live(prefix: str, field: str) -> models.UniqueConstraint:
    """A type's ``unique_field`` is unique per owner among items not in the trash."""
    return models.UniqueConstraint(
        fields=["owner", field],
        condition=Q(deleted_at__isnull=True),
        name=f"{prefix}_{field}_unique_among_live",
    )


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
    import_keys = ("url",)

    url = models.TextField()

    class Meta(Item.Meta):
        indexes = item_indexes("bookmark")
        constraints = [unique_among_live("bookmark", "url")]

    def __str__(self) -> str:
        return self.display_title() or self.url

    @classmethod
    def untitled_name(cls, fallback: str | None) -> str | None:
        # A capture fills a blank title with the page's (services.capture._apply); without one,
        # the URL's host and path.
        parts = urlsplit(fallback or "")
        if not parts.netloc:
            return fallback or None
        shown = parts.netloc + parts.path.rstrip("/")
        return shown + ("?" + parts.query if parts.query else "")

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
