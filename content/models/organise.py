"""Organising: saved filters and links between items (SPEC §10, §11)."""

from __future__ import annotations

from typing import Any

import uuid6
from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from content.models.items import Tag


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
