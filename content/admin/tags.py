"""Tags in the admin: renamed or deleted through the services; created only by tagging items."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from django.contrib import admin
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import HttpRequest

from content import item_types, services
from content.admin.forms import ServiceForm
from content.models import Item, SavedFilter, Tag
from tiddly.owned_admin import OwnedAdmin


class TagAdminForm(ServiceForm):
    class Meta:
        model = Tag
        fields = ("name",)

    def check_service(self) -> None:
        tag = self.instance
        services.check_rename_tag(owner=tag.owner, tag=tag, new_name=self.cleaned_data["name"])

    def run_service(self) -> Tag:
        tag = self.instance
        return services.rename_tag(
            owner=tag.owner, name=tag.name, new_name=self.cleaned_data["name"]
        )


def _tag_uses(model: type[Item]) -> Coalesce:
    """Items of one type carrying the tag, as a subquery (joins would multiply the counts)."""
    through = model.tags.through
    uses = (
        through._default_manager.filter(tag_id=OuterRef("pk"))
        .values("tag_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(uses, output_field=IntegerField()), Value(0))


def _count_column(type_name: str) -> Callable[[Tag], int]:
    key = f"n_{type_name}s"

    @admin.display(description=f"{type_name}s", ordering=key)
    def column(obj: Tag) -> int:
        return int(getattr(obj, key, 0))

    column.__name__ = f"{type_name}_count"
    return column


# One count column per item type, in registry order (bookmarks, notes, prompts).
COUNT_COLUMNS: list[Callable[[Any], Any]] = [
    _count_column(name) for name in item_types.type_names()
]


@admin.register(Tag)
class TagAdmin(OwnedAdmin):
    """Tags come into being on items; here they are renamed or deleted, through the services."""

    form = TagAdminForm
    list_display = ("name", "owner", *COUNT_COLUMNS, "created_at")
    search_fields = ("name",)
    # The admin accepts callables here as in list_display; django-stubs type these as names only.
    readonly_fields = cast("tuple[str, ...]", ("owner", "created_at", *COUNT_COLUMNS))
    fields = cast("tuple[str, ...]", ("name", "owner", "created_at", *COUNT_COLUMNS))
    ordering = ("name",)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        uses = {f"n_{name}s": _tag_uses(model) for name, model in item_types.registry().items()}
        return super().get_queryset(request).annotate(**uses)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a tag is created by tagging an item

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Nothing to do: ``form.save()`` renamed the tag through the service."""

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """Saved filters using a tag protect it (as the API's 409 tag_in_use): the admin shows
        its "cannot delete" page listing them instead of failing in ``delete_tag``."""
        deleted, counts, perms, protected = super().get_deleted_objects(objs, request)
        using = SavedFilter.objects.filter(tags__in=list(objs)).distinct().order_by("name")
        protected = [*protected, *(f"Saved filter: {f.name}" for f in using)]
        return deleted, counts, perms, protected

    def delete_model(self, request: HttpRequest, obj: Tag) -> None:
        services.delete_tag(owner=obj.owner, name=obj.name)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for tag in queryset.select_related("owner"):
            self.delete_model(request, tag)
