"""The toolkit's OAuth models in the admin, scoped to each person (SPEC §8.2).

A person sees the access and refresh tokens they granted — which application, which scopes,
which resource, until when — and revokes them with the toolkit's revoke actions (which also
revoke the paired token). Applications (registered clients) and authorization codes are for
superusers only: dynamically registered clients belong to nobody.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from oauth2_provider import admin as dot_admin
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_id_token_model,
    get_refresh_token_model,
)


class GrantedByYouMixin:
    """Staff see and revoke the tokens they granted; superusers see everyone's."""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request)  # type: ignore[misc]
        return qs if request.user.is_superuser else qs.filter(user=request.user)

    def _mine(self, request: HttpRequest, obj: Any) -> bool:
        user = request.user
        if not (user.is_active and user.is_staff):
            return False
        return obj is None or user.is_superuser or obj.user_id == user.pk

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._mine(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._mine(request, obj)  # the revoke action needs it; fields are read-only


class AccessTokenAdmin(GrantedByYouMixin, dot_admin.AccessTokenAdmin):
    list_display = ("masked_token", "user", "application", "scope", "resource", "expires")
    readonly_fields = (*list_display[1:], "source_refresh_token")  # the columns, and its origin
    fields = readonly_fields


class RefreshTokenAdmin(GrantedByYouMixin, dot_admin.RefreshTokenAdmin):
    list_display = ("masked_token", "user", "application", "resource", "created", "revoked")
    readonly_fields = ("user", "application", "access_token", "resource", "revoked")
    fields = readonly_fields


for model, model_admin in (
    (get_access_token_model(), AccessTokenAdmin),
    (get_refresh_token_model(), RefreshTokenAdmin),
):
    admin.site.unregister(model)
    admin.site.register(model, model_admin)
# OpenID Connect is off: its ID tokens would only be an empty list.
admin.site.unregister(get_id_token_model())
_ = (get_application_model(), get_grant_model())  # left as the toolkit registers them
