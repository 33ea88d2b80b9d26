"""The item admins: what bookmarks, notes (and, in ``prompts``, prompts) share, and their pages.

Every write goes through ``content.services``, exactly as the REST API and MCP tools do: the forms
(``content.admin.forms``) save with ``create_item``/``update_item``, the list actions
(``content.admin.actions``) call one service per item and the Import page
(``content.admin.portability``) calls the importer.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, ClassVar, cast

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.db.models.functions import Length, Substr
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.text import capfirst

from content import item_types, queries, services
from content.admin import search as meaning
from content.admin.actions import (
    archive_selected,
    delete_permanently,
    restore_selected,
    trash_selected,
    unarchive_selected,
)
from content.admin.capture import (
    CaptureStatusFilter,
    capture_again,
    capture_details,
    capture_status,
)
from content.admin.filters import StateFilter, TagFilter
from content.admin.forms import ADMIN_ACTOR, MONOSPACE, ItemAdminForm
from content.admin.item_history import HistoryAdminMixin
from content.admin.portability import PortabilityAdminMixin
from content.admin.sharing import share_selected, unshare_selected
from content.models import Bookmark, Item, ItemVersion, Note
from content.queries import ItemRef
from content.services import capture as capture_service
from content.shapes import share_data
from content.templatetags.tiddly_time import time_html
from tiddly.errors import TiddlyError
from tiddly.owned_admin import OwnedAdmin


class ItemAdmin(PortabilityAdminMixin, OwnedAdmin):
    """What the bookmark, note and prompt admins share (with the Import page and the export
    actions of ``content.admin.portability``)."""

    form = ItemAdminForm
    # The first fieldset's fields, in order; subclasses name theirs.
    main_fields: ClassVar[tuple[str, ...]] = ("title", "description", "tags", "content")
    list_filter = (StateFilter, TagFilter)
    list_per_page = 50
    ordering = ("-updated_at",)
    actions: tuple[Any, ...] = (
        archive_selected,
        unarchive_selected,
        trash_selected,
        restore_selected,
        delete_permanently,
        share_selected,
        unshare_selected,
    )
    readonly_fields = (
        "owner",
        "state",
        "content_length",
        "created_at",
        "updated_at",
        "last_used_at",
        "deleted_at",
        "linked_items",
        "share_link",
    )
    search_help_text = (
        "Searches title, description and content (substring, any case); or an id." + meaning.HELP
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Lists never load content (up to 10 MB each): its length comes from the database.
        return (
            super()
            .get_queryset(request)
            .defer("content")
            .annotate(content_chars=Length("content"))
            .prefetch_related("tags")
        )

    def get_list_filter(self, request: HttpRequest) -> Any:
        return [*super().get_list_filter(request), meaning.SearchModeFilter]

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        mode = meaning.mode_of(request)
        if mode and search_term.strip():
            found = meaning.by_meaning(request, queryset, search_term, mode)
            if found is not None:
                return found, False
        return self._by_words(request, queryset, search_term)

    def _by_words(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        results, duplicates = super().get_search_results(request, queryset, search_term)
        try:
            pk = uuid.UUID(search_term.strip())
        except ValueError:
            return results, duplicates
        return results | queryset.filter(pk=pk), duplicates

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # it would skip the services and leave history
        return actions

    # Forms ----------------------------------------------------------------------------------

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"admin_user": request.user})

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        main: list[str] = list(self.main_fields)
        if obj is None:
            if request.user.is_superuser:
                main.insert(0, "owner")
            return [(None, {"fields": main}), ("State", {"fields": ["archived_at"]})]
        if self.has_change_permission(request, obj):
            main.append("loaded_updated_at")  # optimistic lock: a stale save is refused
        if self._content_too_big_to_inline(request, obj):
            main[main.index("content")] = "content_excerpt"
        main.insert(0, "owner")
        state = ["state", "archived_at", "deleted_at"]
        times = ["created_at", "updated_at", "last_used_at", "content_length"]
        hint = TRASH_HINT.format(self.opts.verbose_name_plural) if obj.is_deleted else None
        return [
            (None, {"fields": main, "description": hint}),
            ("State", {"fields": state + times}),
            ("Links and sharing", {"fields": ["linked_items", "share_link"]}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is None and request.user.is_superuser:
            readonly.remove("owner")  # a superuser picks the owner of a new item
        if obj is not None and self._content_too_big_to_inline(request, obj):
            readonly.append("content_excerpt")
        return readonly

    def _content_too_big_to_inline(self, request: HttpRequest, obj: Item) -> bool:
        """Megabytes in a textarea make the page slow to send and to render: above
        TIDDLY_ADMIN_INLINE_CONTENT_CHARS the page shows an excerpt (the content stays as it is
        on save) unless the person asks for the editor with ``?edit_content=1``."""
        if request.GET.get("edit_content") == "1":
            return False
        chars = getattr(obj, "content_chars", None)
        return chars is not None and chars > settings.TIDDLY_ADMIN_INLINE_CONTENT_CHARS

    @admin.display(description="content")
    def content_excerpt(self, obj: Item) -> str:
        limit = settings.TIDDLY_ADMIN_EXCERPT_CHARS
        head = (
            type(obj).objects.filter(pk=obj.pk).values_list(Substr("content", 1, limit), flat=True)
        )
        chars = getattr(obj, "content_chars", 0) or 0
        return format_html(
            '<pre style="{}white-space: pre-wrap; max-height: 30em; overflow: auto">{}</pre>'
            '<p class="help">The first {} of {} characters. The content is left unchanged when '
            'you save this page. <a href="?edit_content=1">Load all of it into the editor</a> '
            "(slow for large items), or edit it through the API or an agent.</p>",
            MONOSPACE,
            head.first() or "",
            f"{limit:,}",
            f"{chars:,}",
        )

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Items in the trash are read-only, as in the API: restore them first.
        if obj is not None and obj.is_deleted:
            return False
        return super().has_change_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Nothing to do: ``form.save()`` (the admin's ``save_form``) called the service."""

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except TiddlyError as exc:
            # The form's checks passed, then the save lost a race (another writer took the URL or
            # name, or changed the item): nothing was written; say so and show the form again.
            messages.error(request, f"Nothing was saved: {exc.message}")
            return HttpResponseRedirect(request.get_full_path())

    def get_deleted_objects(
        self, objs: Any, request: HttpRequest
    ) -> tuple[list[str], dict[str, int], set[str], list[str]]:
        """What the delete page lists: the items and their history (tags stay, only detached)."""
        items = list(objs)
        name = self.opts.verbose_name
        shown = [
            format_html('{}: <a href="{}">{}</a>', capfirst(name), self._change_url(i), i)
            for i in items
        ]
        history = ItemVersion.objects.filter(
            item_type=self.model.type_name, item_id__in=[i.pk for i in items]
        ).count()
        counts = {self.opts.verbose_name_plural: len(items), "history records": history}
        return shown, counts, set(), []  # type: ignore[return-value]  # SafeStrings are strs

    def _change_url(self, obj: Item) -> str:
        return reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_change", args=[obj.pk])

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        services.delete_item_permanently(
            owner=obj.owner, ref=ItemRef(self.model, pk=obj.pk), actor=ADMIN_ACTOR
        )

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for item in queryset.select_related("owner"):
            self.delete_model(request, item)

    # Columns --------------------------------------------------------------------------------

    @admin.display(description="state")
    def state(self, obj: Item) -> str:
        if obj._state.adding:
            return "-"
        if obj.is_deleted:
            return format_html("in trash, {}", _when(obj.deleted_at))
        if obj.is_archived:
            return format_html("archived {}", _when(obj.archived_at))
        if obj.archived_at is not None:
            return format_html("active, archives {}", _when(obj.archived_at))
        return "active"

    @admin.display(description="updated", ordering="updated_at")
    def updated(self, obj: Item) -> str:
        return _when(obj.updated_at)

    @admin.display(description="tags")
    def tag_list(self, obj: Item) -> str:
        # One chip per tag, so a list wraps between tags, never inside one.
        return format_html_join(
            " ", '<span class="tiddly-tag">{}</span>', ((t,) for t in obj.tag_names())
        )

    @admin.display(description="share link")
    def share_link(self, obj: Item) -> str:
        share = share_data(obj)
        if share is None:
            return "Not shared (the list action “Share” makes a public link)."
        return format_html('<a href="{0}" id="share-url">{0}</a>', share["url"])

    @admin.display(description="linked items")
    def linked_items(self, obj: Item) -> str:
        """The items linked to this one (SPEC §12), each a link to its page."""
        rows = queries.related_items(obj.owner, obj)
        if not rows:
            return "—"
        return format_html_join(
            mark_safe("<br>"),
            '<a href="{}">{} · {}</a> {}',
            (
                (
                    _admin_url(r["type"], r["id"]),
                    r["type"],
                    r["title"] or r["id"],
                    r["description"] or "",
                )
                for r in rows
            ),
        )

    @admin.display(description="content length", ordering="content_chars")
    def content_length(self, obj: Item) -> str:
        chars = getattr(obj, "content_chars", None)
        if chars is None and not obj._state.adding and "content" in obj.__dict__:
            chars = len(obj.content) if obj.content is not None else None
        return "-" if chars is None else f"{chars:,}"


TRASH_HINT = (
    "This item is in the trash, so it is read-only. To edit it, select it on the list and run "
    "“Restore selected {} from the trash”."
)


def _admin_url(type_name: str, pk: str) -> str:
    meta = item_types.model_for(type_name)._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[pk])


def _when(moment: datetime | None) -> str:
    """In words ("3 hours ago"), the exact time on hover (SPEC §9)."""
    return time_html(moment) if moment else "-"


@admin.register(Bookmark)
class BookmarkAdmin(HistoryAdminMixin, ItemAdmin):
    main_fields = ("url", "title", "description", "tags", "content")
    list_display = cast(
        Any,
        (
            "label",
            "link",
            "owner",
            "state",
            "tag_list",
            "updated",
            "content_length",
            capture_status,
        ),
    )
    # cast: the base admin's tuples are typed by their length; these add a column each.
    list_filter = cast(Any, (StateFilter, TagFilter, CaptureStatusFilter))
    actions = (*ItemAdmin.actions, capture_again)
    readonly_fields = cast(Any, (*ItemAdmin.readonly_fields, capture_details))

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("capture")

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view(self.capture_view)
        return [
            path("<path:object_id>/change/capture/", view, name="content_bookmark_capture"),
            *super().get_urls(),
        ]

    def capture_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The change page's "Capture again" button (POST): one capture request, then back."""
        bookmark = self.get_object(request, object_id)  # owner-scoped: another's is None
        if bookmark is None or request.method != "POST":
            raise Http404("No such bookmark among yours.")
        try:
            capture_service.capture_again(
                owner=bookmark.owner, ref=ItemRef(Bookmark, pk=bookmark.pk)
            )
        except TiddlyError as exc:
            messages.error(request, f"Not captured: {exc.message}")
        else:
            messages.success(request, "Capture queued: the page is fetched in the background.")
        return HttpResponseRedirect(self._change_url(bookmark))

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None:
            return fieldsets
        return [*fieldsets, ("Capture", {"fields": [capture_details]})]

    search_fields = ("title", "description", "url", "content")
    search_help_text = (
        "Searches title, description, URL and content (substring); or an id." + meaning.HELP
    )

    @admin.display(description="title", ordering="title")
    def label(self, obj: Bookmark) -> str:
        return obj.display_title() or obj.url

    @admin.display(description="url", ordering="url")
    def link(self, obj: Bookmark) -> str:
        bare = obj.url.split("://", 1)[-1]
        shown = bare if len(bare) <= 32 else bare[:31] + "…"
        return format_html(
            '<a href="{}" rel="noreferrer" target="_blank" title="{}">{}</a>',
            obj.url,
            obj.url,
            shown,
        )


@admin.register(Note)
class NoteAdmin(HistoryAdminMixin, ItemAdmin):
    list_display = ("title", "owner", "state", "tag_list", "updated", "content_length")
    search_fields = ("title", "description", "content")
