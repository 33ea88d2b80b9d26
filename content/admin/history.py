"""Every recorded version and event, read-only: history is written only by the services."""

from __future__ import annotations

import time
import uuid
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import Min, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from content import item_types
from content.history import Actor
from content.models import ItemVersion
from content.services import revert
from tiddly.errors import TiddlyError
from tiddly.owned_admin import OwnedAdmin


def _item_admin_url(type_name: str) -> str:
    opts = item_types.model_for(type_name)._meta
    return f"admin:{opts.app_label}_{opts.model_name}_change"


@admin.register(ItemVersion)
class ItemVersionAdmin(OwnedAdmin):
    """Every recorded version and event, read-only: history is written only by the services."""

    list_display = (
        "created_at",
        "item_link",
        "item_type",
        "version",
        "action",
        "changed",
        "source",
        "token_prefix",
        "owner",
    )
    list_filter = ("item_type", "action", "source")
    search_fields = ("source", "token_prefix")
    search_help_text = "Searches source and token prefix; paste an item id to see its history."
    fields = (
        "owner",
        "item_link",
        "item_type",
        "item_id",
        "version",
        "action",
        "changed_fields",
        "metadata",
        "stored_content",
        "source",
        "token_prefix",
        "created_at",
    )
    readonly_fields = fields
    ordering = ("-created_at",)
    actions = ["revert_token"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Patches and snapshots can be megabytes; the list shows none of them.
        return super().get_queryset(request).defer("content_patch", "content_snapshot")

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        try:
            item_id = uuid.UUID(search_term.strip())
        except ValueError:
            return super().get_search_results(request, queryset, search_term)
        return queryset.filter(Q(item_id=item_id) | Q(pk=item_id)), False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # erased only with its item (delete permanently)

    @admin.display(description="item")
    def item_link(self, obj: ItemVersion) -> str:
        meta = obj.metadata or {}
        label = str(meta.get("name") or meta.get("title") or meta.get("url") or obj.item_id)
        try:
            url = reverse(_item_admin_url(obj.item_type), args=[obj.item_id])
        except (TiddlyError, NoReverseMatch):
            return label
        return format_html('<a href="{}">{}</a>', url, label)

    @admin.display(description="changed fields")
    def changed(self, obj: ItemVersion) -> str:
        return ", ".join(obj.changed_fields or [])

    @admin.display(description="stored content")
    def stored_content(self, obj: ItemVersion) -> str:
        parts: list[str] = []
        if obj.content_snapshot is not None:
            parts.append(f"full snapshot, {len(obj.content_snapshot):,} characters")
        if obj.content_patch:
            parts.append(f"reverse patch, {len(obj.content_patch):,} characters")
        if obj.content_is_null:
            parts.append("content was empty (null)")
        return "; ".join(parts) or "-"

    @admin.action(description="Revert everything this token changed since the selected change")
    def revert_token(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        """Select the token's first bad change (or several of its changes): every item that
        token changed since the earliest of them is put back, after a confirmation page that
        lists what will happen to each item."""
        picked = queryset.order_by().values("owner", "token_prefix").distinct()
        if len(picked) != 1 or picked[0]["token_prefix"] is None:
            messages.error(
                request,
                "Select changes made with one API token (one owner, one token prefix); changes "
                "made in the admin or with a session have no token to revert.",
            )
            return None
        first = queryset.select_related("owner").first()
        if first is None:  # an action always has a selection; stay quiet if it was emptied
            return None
        owner = first.owner
        prefix = picked[0]["token_prefix"]
        since = queryset.aggregate(since=Min("created_at"))["since"]
        force = bool(request.POST.get("force"))
        if not request.POST.get("post"):
            steps = revert.plan_revert(owner=owner, token_prefix=prefix, since=since)
            return TemplateResponse(
                request,
                "admin/content/revert_token_confirmation.html",
                {
                    **self.admin_site.each_context(request),
                    "title": f"Revert everything token {prefix} changed?",
                    "subtitle": None,
                    "opts": self.opts,
                    "token_prefix": prefix,
                    "since": since,
                    "owner": owner,
                    "steps": [_step_row(step) for step in steps],
                    "queryset": queryset,
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                    "media": self.media,
                },
            )
        reverted, trashed, conflicts, remaining = _run_batches(owner, prefix, since, force)
        messages.success(
            request,
            f"Token {prefix}: {reverted} item(s) reverted, {trashed} moved to the trash, "
            f"{len(conflicts)} left as they were.",
        )
        if remaining:
            messages.warning(
                request,
                f"{remaining} item(s) remain: run the same action again to continue.",
            )
        for conflict in conflicts[:MAX_CONFLICT_MESSAGES]:
            messages.warning(request, f"{conflict['type']} {conflict['id']}: {conflict['reason']}")
        if len(conflicts) > MAX_CONFLICT_MESSAGES:
            messages.warning(request, f"… and {len(conflicts) - MAX_CONFLICT_MESSAGES} more.")
        return None


# The admin runs the revert's batches for the person, for at most this long in one request.
BATCHES_SECONDS = 20.0
MAX_CONFLICT_MESSAGES = 50


def _run_batches(
    owner: Any, prefix: str, since: Any, force: bool
) -> tuple[int, int, list[dict[str, Any]], int]:
    """Repeat the revert batch by batch until nothing remains or the time budget is spent;
    each batch is its own transaction, so none holds its locks for long."""
    reverted = trashed = 0
    conflicts: dict[tuple[str, str], dict[str, Any]] = {}
    deadline = time.monotonic() + BATCHES_SECONDS
    while True:
        report = revert.revert_token(
            owner=owner, token_prefix=prefix, since=since, force=force, actor=Actor("revert")
        )
        reverted += len(report.reverted)
        trashed += len(report.trashed)
        conflicts.update(((c["type"], c["id"]), c) for c in report.conflicts)
        if not report.remaining or time.monotonic() > deadline:
            return reverted, trashed, list(conflicts.values()), report.remaining


def _step_row(step: revert.Step) -> dict[str, Any]:
    item = step.item
    what = {
        revert.REVERT: f"back to version {step.version}",
        revert.TRASH: "created by the token: moved to the trash",
    }.get(step.action or "", f"conflict: {step.reason}")
    try:
        url = reverse(_item_admin_url(item.type_name), args=[item.pk])
    except NoReverseMatch:
        url = None
    return {
        "type": item.type_name,
        "label": str(item),
        "url": url,
        "what": what,
        "conflict": step.action is None,
    }
