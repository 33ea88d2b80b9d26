"""Saved filters in the admin (SPEC §11): listed, edited and validated through the services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from content import services
from content.admin.forms import ServiceForm
from content.models import SavedFilter
from tiddly.owned_admin import OwnedAdmin

FIELDS = ("name", "content_types", "expression", "default_sort_by", "default_sort_order")


class SavedFilterForm(ServiceForm):
    class Meta:
        model = SavedFilter
        fields = FIELDS
        help_texts = {
            "content_types": 'A JSON list of types, e.g. ["note", "bookmark"].',
            "expression": 'e.g. {"groups": [{"tags": ["work", "client-a"]}, {"tags": ["urgent"]}]}'
            ": an item matches when it has all the tags of any group.",
        }

    def _owner(self) -> Any:
        return self.instance.owner if not self.adding else self.admin_user

    def _data(self) -> dict[str, Any]:
        return {name: self.cleaned_data.get(name) for name in FIELDS}

    def check_service(self) -> None:
        instance = None if self.adding else SavedFilter.objects.get(pk=self.instance.pk)
        services.check_filter(owner=self._owner(), data=self._data(), instance=instance)

    def run_service(self) -> SavedFilter:
        if self.adding:
            return services.create_filter(owner=self._owner(), data=self._data())
        return services.update_filter(
            owner=self._owner(), filter_id=self.instance.pk, data=self._data()
        )


@admin.register(SavedFilter)
class SavedFilterAdmin(OwnedAdmin):
    form = SavedFilterForm
    list_display = ("name", "owner", "content_types", "expression_text", "updated_at")
    search_fields = ("name",)
    readonly_fields = ("owner", "created_at", "updated_at")
    ordering = ("name",)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return FIELDS if obj is None else ("owner", *FIELDS, "created_at", "updated_at")

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"admin_user": request.user})

    @admin.display(description="matches")
    def expression_text(self, obj: SavedFilter) -> str:
        groups = obj.groups
        return " OR ".join("(" + " AND ".join(g) + ")" for g in groups) or "every item"

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Nothing to do: ``form.save()`` saved through the service."""
