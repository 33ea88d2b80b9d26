"""List filters of the item admins: state (incl. scheduled) and the tags that type uses."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from content.models import ItemState, Tag, state_q


class StateFilter(admin.SimpleListFilter):
    """SPEC §2 states, plus *scheduled*: active, with an ``archived_at`` still in the future.

    The default ("All") shows every state, so an item you just archived or trashed stays in view
    with its new state in the State column.
    """

    title = "state"
    parameter_name = "state"
    SCHEDULED = "scheduled"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            (ItemState.ACTIVE, "Active (incl. scheduled)"),
            (self.SCHEDULED, "Scheduled to archive"),
            (ItemState.ARCHIVED, "Archived"),
            (ItemState.DELETED, "In trash"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet | None:
        now = timezone.now()
        if self.value() == self.SCHEDULED:
            return queryset.filter(deleted_at__isnull=True, archived_at__gt=now)
        value = self.value()
        if value in ItemState.values:
            return queryset.filter(state_q(str(value), now))
        return None


class TagFilter(admin.SimpleListFilter):
    """The tags that this admin's item type uses (a note list does not offer bookmark tags)."""

    title = "tag"
    parameter_name = "tag"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        used = model_admin.model.tags.through.objects.values("tag_id")
        tags = Tag.objects.filter(pk__in=used)
        if not request.user.is_superuser:
            tags = tags.filter(owner_id=request.user.pk)
        names = tags.order_by("name").values_list("name", flat=True).distinct()
        return [(name, name) for name in names]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet | None:
        # One tag per name per owner, so this join never duplicates rows.
        return queryset.filter(tags__name=self.value()) if self.value() else None
