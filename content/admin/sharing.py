"""Share links in the admin (SPEC §17.4): "Share" / "Stop sharing" on item lists, and a list of
the owner's links, each revocable. Every change goes through ``content.services.sharing``, so
the item's history records it as for REST."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from content import item_types
from content.admin.actions import _run_each
from content.admin.forms import ADMIN_ACTOR
from content.models import Item, Share
from content.queries import ItemRef
from content.services import sharing
from tiddly.owned_admin import OwnedAdmin


def _origin(request: HttpRequest) -> str:
    return settings.TIDDLY_PUBLIC_URL or f"{request.scheme}://{request.get_host()}"


@admin.action(description="Share selected by public links")
def share_selected(modeladmin: admin.ModelAdmin, request: HttpRequest, qs: QuerySet) -> None:
    origin = _origin(request)

    def call(item: Item, ref: ItemRef) -> Any:
        return sharing.share_item(owner=item.owner, ref=ref, origin=origin, actor=ADMIN_ACTOR)

    def skip(item: Item) -> str | None:
        return "It is in the trash; restore it first." if item.is_deleted else None

    _run_each(modeladmin, request, qs, call, done="Shared (see Share links)", skip=skip)


@admin.action(description="Stop sharing selected")
def unshare_selected(modeladmin: admin.ModelAdmin, request: HttpRequest, qs: QuerySet) -> None:
    def call(item: Item, ref: ItemRef) -> Any:
        return sharing.unshare_item(owner=item.owner, ref=ref, actor=ADMIN_ACTOR)

    _run_each(modeladmin, request, qs, call, done="No longer shared")


@admin.register(Share)
class ShareAdmin(OwnedAdmin):
    """The owner's public links: which item, the URL, since when; revoking deletes the link."""

    list_display = ("item_link", "public_url", "owner", "created_at")
    list_filter = ("item_type",)
    ordering = ("-created_at",)
    actions = ("revoke_selected",)
    list_display_links = None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # links are made from an item ("Share selected" or the REST API)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_actions(self, request: HttpRequest) -> Any:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # revoking records a history event; delete would not
        return actions

    @admin.display(description="Item")
    def item_link(self, share: Share) -> str:
        model = item_types.registry().get(share.item_type)
        if model is None:
            return f"{share.item_type} {share.item_id}"
        item = model.objects.filter(pk=share.item_id).first()
        label = str(item) if item is not None else str(share.item_id)
        trashed = " (in the trash: hidden)" if item is not None and item.is_deleted else ""
        try:
            url = reverse(
                f"admin:{model._meta.app_label}_{model._meta.model_name}_change",
                args=[share.item_id],
            )
        except NoReverseMatch:
            return f"{share.item_type} {label}{trashed}"
        return format_html('{} <a href="{}">{}</a>{}', share.item_type, url, label, trashed)

    @admin.display(description="Public URL")
    def public_url(self, share: Share) -> str:
        return format_html('<a href="{0}" rel="noreferrer">{0}</a>', share.url)

    @admin.action(description="Revoke selected share links")
    def revoke_selected(self, request: HttpRequest, qs: QuerySet) -> None:
        count = 0
        for share in qs:
            sharing.revoke_share(share=share, actor=ADMIN_ACTOR)
            count += 1
        messages.success(request, f"Revoked {count} share link{'s' if count != 1 else ''}.")
