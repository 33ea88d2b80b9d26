"""Version history on an item's admin page (SPEC §6, §9).

The item admins (bookmarks, notes, prompts) inherit ``HistoryAdminMixin`` first. It adds:

* a history table under the change form (newest first: version, when, action, source, changed
  fields), and the same table for all kept rows on the admin's own "History" page;
* a version page, ``<id>/history/<version>/``: what that version changed (unified diff) with the
  metadata before and after;
* "Restore this version": a POST (CSRF-protected, like every admin view) that calls
  ``services.restore_version`` with source ``admin`` — the same service the REST API uses — so
  validation and uniqueness apply, and an archived item stays archived.

Who may see and restore follows the item admin: its owner-scoped queryset decides what exists, the
view/change permissions decide what is shown (items in the trash are read-only: no restore).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
)
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from content import history, services
from content.admin.forms import ADMIN_ACTOR
from content.models import Item, ItemVersion
from content.queries import ItemRef
from tiddly.errors import TiddlyError

# Rows shown under the change form; the History page shows every kept row.
CHANGE_PAGE_ROWS = 20
# A version page shows at most this much of the version's content (the diff is bounded anyway).
CONTENT_PREVIEW_CHARS = 200_000


class HistoryAdminMixin(admin.ModelAdmin):
    """History table, diff view and restore-to-version for an item ``ModelAdmin``."""

    change_form_template = "admin/content/change_form_with_history.html"

    def get_urls(self) -> list[URLPattern]:
        info = self.opts.app_label, self.opts.model_name
        wrap = self.admin_site.admin_view
        return [
            path(
                "<path:object_id>/history/<int:version>/",
                wrap(self.version_view),
                name="{}_{}_history_version".format(*info),
            ),
            path(
                "<path:object_id>/history/<int:version>/restore/",
                wrap(self.restore_version_view),
                name="{}_{}_history_restore".format(*info),
            ),
            *super().get_urls(),
        ]

    # Pages ------------------------------------------------------------------------------------

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        item = self._item_or_none(request, object_id)
        context = dict(extra_context or {})
        if item is not None:
            context["item_history"] = self._history_context(request, item, CHANGE_PAGE_ROWS)
        return super().change_view(request, object_id, form_url, context)

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The admin's "History" button: every kept version and event of the item."""
        item = self._viewable(request, object_id)
        return TemplateResponse(
            request,
            "admin/content/item_history.html",
            {
                **self.admin_site.each_context(request),
                **(extra_context or {}),
                "title": f"History: {item}",
                "subtitle": None,
                "opts": self.opts,
                "original": item,
                "item_history": self._history_context(request, item, None),
            },
        )

    def version_view(self, request: HttpRequest, object_id: str, version: int) -> HttpResponse:
        item = self._viewable(request, object_id)
        try:
            found = history.version_diff(item, version)
            content = history.reconstruct(item, version)
        except TiddlyError as exc:
            messages.error(request, exc.message)
            return HttpResponseRedirect(self._url("history", item))
        latest = history.latest_version(item)
        return TemplateResponse(
            request,
            "admin/content/item_version.html",
            {
                **self.admin_site.each_context(request),
                "title": f"{item} — version {version}",
                "subtitle": None,
                "opts": self.opts,
                "original": item,
                "row": found.row,
                "version": version,
                "is_current": version == latest,
                "can_restore": version != latest and self.has_change_permission(request, item),
                "restore_url": self._version_url("restore", item, version),
                "diff_lines": _diff_lines(found.diff.text),
                "diff": found.diff,
                "content_changed": found.content_changed,
                "metadata_rows": _metadata_rows(
                    found.before_row.metadata if found.before_row else None, found.row.metadata
                ),
                "content": None if content is None else content[:CONTENT_PREVIEW_CHARS],
                "content_cut": content is not None and len(content) > CONTENT_PREVIEW_CHARS,
                "is_archived": item.is_archived,
            },
        )

    def restore_version_view(
        self, request: HttpRequest, object_id: str, version: int
    ) -> HttpResponse:
        if request.method not in ("GET", "POST"):
            return HttpResponseNotAllowed(["GET", "POST"])
        item = self._viewable(request, object_id)
        if not self.has_change_permission(request, item):
            raise PermissionDenied
        if request.method == "GET" or request.POST.get("confirm") != "yes":
            return self._restore_confirmation(request, item, version)
        try:
            services.restore_version(
                owner=item.owner,
                ref=ItemRef(self.model, pk=item.pk),
                version=version,
                actor=ADMIN_ACTOR,
            )
        except TiddlyError as exc:
            messages.error(request, f"Version {version} was not restored: {exc.message}")
            return HttpResponseRedirect(self._version_url("version", item, version))
        still = " It is still archived." if item.is_archived else ""
        messages.success(request, f"Restored version {version} as a new version.{still}")
        return HttpResponseRedirect(self._url("change", item))

    def _restore_confirmation(self, request: HttpRequest, item: Item, version: int) -> HttpResponse:
        """Restoring replaces the current content and metadata: say what, then ask."""
        try:
            row = history.get_version(item, version)
        except TiddlyError as exc:
            messages.error(request, exc.message)
            return HttpResponseRedirect(self._url("history", item))
        return TemplateResponse(
            request,
            "admin/content/restore_confirmation.html",
            {
                **self.admin_site.each_context(request),
                "title": f"Restore version {version}?",
                "subtitle": None,
                "opts": self.opts,
                "original": item,
                "row": row,
                "version": version,
                "latest": history.latest_version(item),
                "version_url": self._version_url("version", item, version),
                "is_archived": item.is_archived,
            },
        )

    # Helpers ----------------------------------------------------------------------------------

    def _item_or_none(self, request: HttpRequest, object_id: str) -> Item | None:
        item = self.get_object(request, unquote(object_id))
        return item if item is not None and self.has_view_permission(request, item) else None

    def _viewable(self, request: HttpRequest, object_id: str) -> Item:
        item = self._item_or_none(request, object_id)
        if item is None:  # the same answer whether it does not exist or is someone else's
            raise Http404(f"No {self.opts.verbose_name} with id {object_id!r} among yours.")
        return item

    def _history_context(self, request: HttpRequest, item: Item, limit: int | None) -> Any:
        rows = (
            history.item_versions(item)
            .defer("content_patch", "content_snapshot")
            .order_by("-created_at", "-id")
        )
        total = rows.count()
        shown = list(rows if limit is None else rows[:limit])
        latest = history.latest_version(item)
        can_restore = self.has_change_permission(request, item)
        return {
            "rows": [self._row(item, row, latest, can_restore) for row in shown],
            "total": total,
            "more": total > len(shown),
            "history_url": self._url("history", item),
        }

    def _row(self, item: Item, row: ItemVersion, latest: int, can_restore: bool) -> dict:
        versioned = row.version is not None
        return {
            "row": row,
            "changed": ", ".join(row.changed_fields or []),
            "version_url": self._version_url("version", item, row.version) if versioned else None,
            "restore_url": (
                self._version_url("restore", item, row.version)
                if versioned and can_restore and row.version != latest
                else None
            ),
            "is_current": versioned and row.version == latest,
        }

    def _url(self, name: str, item: Item) -> str:
        return reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_{name}",
            args=[item.pk],
            current_app=self.admin_site.name,
        )

    def _version_url(self, what: str, item: Item, version: int | None) -> str:
        return reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_history_{what}",
            args=[item.pk, version],
            current_app=self.admin_site.name,
        )


def _diff_lines(text: str) -> list[tuple[str, str]]:
    """(css class, line) pairs for colouring a unified diff."""
    kinds = {"@": "hunk", "+": "added", "-": "removed", "\\": "note"}
    lines = text.splitlines()
    return [
        ("file" if index < 2 else kinds.get(line[:1], "same"), line)
        for index, line in enumerate(lines)
    ]


def _metadata_rows(before: dict | None, after: dict) -> list[dict[str, Any]]:
    keys = list(dict.fromkeys([*after, *(before or {})]))
    return [
        {
            "field": key,
            "before": _shown(before.get(key)) if before is not None else "—",
            "after": _shown(after.get(key)),
            "changed": before is not None and before.get(key) != after.get(key),
        }
        for key in keys
    ]


def _shown(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        if value and isinstance(value[0], dict):  # prompt arguments
            return ", ".join(a.get("name", "?") + ("" if a.get("required") else "?") for a in value)
        return ", ".join(str(v) for v in value) or "—"
    return str(value)
