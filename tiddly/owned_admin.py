"""The owner-scoped admin base every app's admin builds on (items, tags, tokens, history).

Every active staff user may use these pages and sees only what they own (the Django model
permissions are not consulted: ownership is the permission). Superusers see everything and pick the
owner when adding.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest


class OwnedAdmin(admin.ModelAdmin):
    """Scopes a model with an ``owner`` to the signed-in staff user (superusers see all)."""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request).select_related("owner")
        if request.user.is_superuser:
            return qs
        return qs.filter(owner=request.user)

    def _is_staff(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def _may_touch(self, request: HttpRequest, obj: Any) -> bool:
        if not self._is_staff(request):
            return False
        return obj is None or request.user.is_superuser or obj.owner_id == request.user.pk

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._is_staff(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_touch(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._is_staff(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_touch(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_touch(request, obj)

    def get_list_display(self, request: HttpRequest) -> Any:
        columns = list(super().get_list_display(request))
        return columns if request.user.is_superuser else [c for c in columns if c != "owner"]

    def get_list_filter(self, request: HttpRequest) -> Any:
        filters = list(super().get_list_filter(request))
        if request.user.is_superuser:
            filters.append(("owner", admin.RelatedOnlyFieldListFilter))
        return filters

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        return {"owner": request.user.pk, **super().get_changeform_initial_data(request)}
