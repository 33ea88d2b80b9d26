"""API tokens in the admin (SPEC §8): issue, rename, change expiry, revoke (delete); and people,
whose deletion erases on SQLite (``UserAdmin``).

A new token's plaintext is shown once, on the page that answers the add form — rendered directly
rather than passed through ``messages``, whose cookie/session storage would keep a copy of the
secret outside the hash. The hash itself is never displayed.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone

from tiddly.models import ApiToken
from tiddly.oauth import admin as oauth_admin  # noqa: F401  (the toolkit's models, per person)
from tiddly.owned_admin import OwnedAdmin
from tiddly.scopes import ALL_SCOPES, DESCRIPTIONS, scope_string
from tiddly.sqlite import base as sqlite_base


class ScopesField(forms.MultipleChoiceField):
    """The space-separated ``scopes`` column as one checkbox per scope."""

    widget = forms.CheckboxSelectMultiple

    def __init__(self, **kwargs: Any) -> None:
        kwargs.pop("max_length", None)
        kwargs.pop("empty_value", None)
        choices = [(s, f"{s} — {DESCRIPTIONS[s]}") for s in ALL_SCOPES]
        super().__init__(choices=choices, **kwargs)

    def prepare_value(self, value: Any) -> Any:
        return value.split() if isinstance(value, str) else value

    def clean(self, value: Any) -> str:
        return scope_string(super().clean(value))


# Branding (SPEC §9): the admin is Tiddly's, not "Django administration".
admin.site.site_header = "Tiddly"
admin.site.site_title = "Tiddly"
admin.site.index_title = "Your bookmarks, notes and prompts"
# The app list is on the index page and in the breadcrumbs; without the sidebar a list's
# columns fit 1 280 px.
admin.site.enable_nav_sidebar = False


class ExpiryFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("valid", "Valid"), ("expired", "Expired")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet | None:
        expired = Q(expires_at__lte=timezone.now())
        if self.value() == "expired":
            return queryset.filter(expired)
        if self.value() == "valid":
            return queryset.exclude(expired)
        return None


@admin.register(ApiToken)
class ApiTokenAdmin(OwnedAdmin):
    list_display = (
        "name",
        "shown_prefix",
        "owner",
        "scopes",
        "status",
        "created_at",
        "last_used_at",
    )
    list_filter = (ExpiryFilter,)
    search_fields = ("name", "prefix")
    readonly_fields = ("owner", "shown_prefix", "created_at", "last_used_at")
    ordering = ("-created_at",)
    actions = ("delete_selected",)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return (
                ["owner", "name", "scopes", "expires_at"]
                if request.user.is_superuser
                else ["name", "scopes", "expires_at"]
            )
        return [
            "name",
            "owner",
            "shown_prefix",
            "scopes",
            "expires_at",
            "created_at",
            "last_used_at",
        ]

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "scopes":
            # A new token starts with all four ticked, as the model's default (SPEC §8.1); the
            # add form has no instance, so only the field's own initial can say so.
            return ScopesField(
                label="Scopes", help_text="What the token may do.", initial=list(ALL_SCOPES)
            )
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None and request.user.is_superuser:
            return [f for f in self.readonly_fields if f != "owner"]
        return self.readonly_fields

    def save_form(self, request: HttpRequest, form: Any, change: bool) -> Any:
        if change:
            return super().save_form(request, form, change)
        data = form.cleaned_data
        token, _ = ApiToken.issue(
            owner=data.get("owner") or request.user,
            name=data["name"],
            expires_at=data.get("expires_at"),
            scopes=data["scopes"],
        )
        return token

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change:  # a new token was saved by ApiToken.issue in save_form
            super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        if change:
            super().save_related(request, form, formsets, change)

    def response_add(self, request: HttpRequest, obj: Any, post_url_continue: Any = None) -> Any:
        plaintext = obj.plaintext
        if plaintext is None:
            return super().response_add(request, obj, post_url_continue)
        # Admin views are never_cache (no-store), so the page with the secret is not cached either.
        return TemplateResponse(
            request,
            "admin/tiddly/apitoken/token_created.html",
            {
                **self.admin_site.each_context(request),
                "title": "API token created",
                "subtitle": None,
                "opts": self.opts,
                "token": obj,
                "plaintext": plaintext,
                "change_url": reverse("admin:tiddly_apitoken_change", args=[obj.pk]),
            },
        )

    @admin.display(description="prefix", ordering="prefix")
    def shown_prefix(self, obj: ApiToken) -> str:
        return f"{obj.prefix}…" if obj.prefix else "-"

    @admin.display(description="status", ordering="expires_at")
    def status(self, obj: ApiToken) -> str:
        if obj.expires_at is None:
            return "valid, never expires"
        when = timezone.localtime(obj.expires_at).strftime("%Y-%m-%d %H:%M")
        return f"expired {when}" if obj.is_expired else f"valid until {when}"


class UserAdmin(auth_admin.UserAdmin):
    """Django's, except that deleting a person (with all their items, history and tokens) zeroes
    on SQLite the pages the deletes free, as a permanent delete does (``sqlite_base.erasing``)."""

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        with sqlite_base.erasing():
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        with sqlite_base.erasing():
            super().delete_queryset(request, queryset)


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), UserAdmin)
