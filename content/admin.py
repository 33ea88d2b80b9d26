"""The admin for bookmarks, notes, tags and version history (SPEC §9); prompts reuse ``ItemAdmin``.

Every write goes through ``content.services``, exactly as the REST API and MCP tools do:

* Add/change forms call ``create_item``/``update_item`` while the form validates (see
  ``ItemAdminForm``), so a rule the service enforces comes back as an error on the form, with the
  API's message, and a valid save records a version with source ``admin``.
* The lifecycle actions (archive, unarchive, trash, restore, delete permanently) call one service
  per selected item and report each failure by name.

Access: every active staff user may use these pages, and sees only what they own (the Django
model permissions are not consulted: ownership is the permission). Superusers see everything and
pick the owner when adding; actions on another user's item act as that item's owner.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar
from urllib.parse import urlsplit

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import model_ngettext
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Length
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html
from django.utils.text import capfirst

from content import services
from content.admin_history import HistoryAdminMixin
from content.history import Actor
from content.models import Bookmark, Item, ItemState, ItemVersion, Note, Tag, state_q
from content.services import ItemRef
from prompts.models import Prompt
from tiddly.errors import (
    FieldLimitExceeded,
    NameConflict,
    StaleItem,
    TiddlyError,
    UrlConflict,
    ValidationFailed,
)

ADMIN_ACTOR = Actor(source="admin")
# Content is edited by agents with exact-match replacements: show its whitespace faithfully.
MONOSPACE = "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;"


# --- who sees what ------------------------------------------------------------------------------


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


# --- list filters -------------------------------------------------------------------------------


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
        if self.value() in ItemState.values:
            return queryset.filter(state_q(self.value(), now))
        return None


class TagFilter(admin.SimpleListFilter):
    title = "tag"
    parameter_name = "tag"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        tags = Tag.objects.all()
        if not request.user.is_superuser:
            tags = tags.filter(owner=request.user)
        names = tags.order_by("name").values_list("name", flat=True).distinct()
        return [(name, name) for name in names]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet | None:
        # One tag per name per owner, so this join never duplicates rows.
        return queryset.filter(tags__name=self.value()) if self.value() else None


# --- the add/change form ------------------------------------------------------------------------


def _blank_to_none(value: Any) -> Any:
    return None if value == "" else value


def _same_text(value: str | None, initial: str | None) -> str | None:
    """Undo the browser's CRLF: a textarea always posts \\r\\n, whatever the stored text used."""
    if value is None or "\r\n" not in value:
        return value
    if initial is not None and "\r\n" in initial:
        return value  # the text already used CRLF: keep what was posted
    return value.replace("\r\n", "\n")


def _differs(current: Any, posted: Any) -> bool:
    if isinstance(current, datetime) and isinstance(posted, datetime):
        return current.replace(microsecond=0) != posted.replace(microsecond=0)  # form has seconds
    return bool(current != posted)


def _add_service_error(form: forms.Form, exc: TiddlyError) -> None:
    """Put a service error on the form field it is about (the API's message), else on top."""

    def add(field: str | None, message: str) -> None:
        form.add_error(field if field in form.fields else None, message)

    if isinstance(exc, ValidationFailed) and exc.extra.get("fields"):
        for field, msgs in exc.extra["fields"].items():
            for message in msgs:
                add(field, message)
    elif isinstance(exc, FieldLimitExceeded):
        field = str(exc.extra.get("field", ""))
        add({"tag": "tags", "argument": "arguments"}.get(field.split(" ")[0], field), exc.message)
    elif isinstance(exc, NameConflict | UrlConflict):
        field = "name" if isinstance(exc, NameConflict) else "url"
        add(field, exc.message)
        if exc.extra.get("existing_id") and isinstance(form, forms.ModelForm):
            opts = form._meta.model._meta
            url = reverse(
                f"admin:{opts.app_label}_{opts.model_name}_change", args=[exc.extra["existing_id"]]
            )
            add(
                field, format_html('<a href="{}">Open the existing {}</a>.', url, opts.verbose_name)
            )
    elif isinstance(exc, StaleItem):
        add(
            None,
            "This item was changed (by someone else, an agent or another tab) after you opened "
            "this page. Nothing was saved. Reload the page to see the current version, then "
            "re-apply your edit.",
        )
    else:
        add(None, exc.message)


class ServiceForm(forms.ModelForm):
    """A ModelForm whose model-level validation *is* the service call.

    Django would normally validate the instance (``full_clean``, unique constraints) and let the
    admin save it. Here ``_post_clean`` calls the service instead — inside the admin's transaction
    for the request — so the service is the single validator: a ``TiddlyError`` becomes a form error
    with the API's message and nothing is written. ``save()`` then returns what the service saved.
    """

    admin_user: ClassVar[Any] = None  # the signed-in user; set by the ModelAdmin's get_form()

    def _post_clean(self) -> None:
        if self.errors:
            return
        try:
            self.instance = self.run_service()
        except TiddlyError as exc:
            _add_service_error(self, exc)

    def run_service(self) -> Any:
        raise NotImplementedError

    def save(self, commit: bool = True) -> Any:
        self.save_m2m = lambda: None  # tags were set by the service
        return self.instance

    @property
    def adding(self) -> bool:
        return bool(self.instance._state.adding)


class ItemAdminForm(ServiceForm):
    """Bookmark/note (and, subclassed, prompt) form: saves with create_item/update_item."""

    # Fields passed to the services when present on the form; tags are added separately.
    service_fields: ClassVar[tuple[str, ...]] = ("title", "description", "content", "url")

    tags = forms.CharField(
        required=False,
        widget=forms.TextInput(attrs={"class": "vLargeTextField"}),
        help_text="Comma-separated, e.g. <code>python, machine-learning</code>. Lower-case "
        "letters, digits and single hyphens; new tags are created.",
    )
    loaded_updated_at = forms.CharField(required=False, widget=forms.HiddenInput)

    class Meta:
        widgets = {
            "title": forms.TextInput(attrs={"class": "vLargeTextField"}),
            # Not type=url: the browser's check would hide the service's message.
            "url": forms.TextInput(attrs={"class": "vURLField"}),
            "description": forms.Textarea(attrs={"rows": 3, "class": "vLargeTextField"}),
            "content": forms.Textarea(
                attrs={
                    "rows": 24,
                    "class": "vLargeTextField",
                    "style": MONOSPACE,
                    "spellcheck": "false",
                }
            ),
        }
        help_texts = {
            "archived_at": "Empty = not archived. A past time archives the item; a future time "
            "schedules it (it stays active until then).",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "content" in self.fields:
            self.fields["content"].strip = False  # whitespace is content (indentation, Markdown)
        if not self.adding:
            self.initial["tags"] = ", ".join(self.instance.tag_names())
            self.initial["loaded_updated_at"] = self.instance.updated_at.isoformat()

    def clean_content(self) -> str | None:
        initial = None if self.adding else self.instance.content
        return _blank_to_none(_same_text(self.cleaned_data.get("content"), initial))

    def clean_loaded_updated_at(self) -> datetime | None:
        raw = self.cleaned_data.get("loaded_updated_at") or ""
        return parse_datetime(raw) if raw else None

    def service_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            name: _blank_to_none(self.cleaned_data[name])
            for name in self.service_fields
            if name in self.cleaned_data
        }
        if "archived_at" in self.cleaned_data:
            data["archived_at"] = self.cleaned_data["archived_at"]
        if "tags" in self.cleaned_data:
            data["tags"] = self.cleaned_data["tags"].split(",")
        return data

    def run_service(self) -> Item:
        model = self._meta.model
        data = self.service_data()
        if self.adding:
            owner = self.cleaned_data.get("owner") or self.admin_user
            return services.create_item(owner=owner, model=model, data=data, actor=ADMIN_ACTOR)
        item = self.instance
        changed = {k: v for k, v in data.items() if k == "tags" or _differs(getattr(item, k), v)}
        return services.update_item(
            owner=item.owner,
            ref=ItemRef(model, pk=item.pk),
            data=changed,
            actor=ADMIN_ACTOR,
            expected_updated_at=self.cleaned_data.get("loaded_updated_at"),
        )


# --- lifecycle actions --------------------------------------------------------------------------

Service = Callable[[Item, ItemRef], Any]


def _run_each(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet,
    service: Service,
    *,
    done: str,
    skip: Callable[[Item], str | None] = lambda item: None,
) -> None:
    """Call ``service`` once per item (each in its own transaction); report failures by name."""
    model = modeladmin.model
    succeeded = 0
    for item in queryset.select_related("owner"):
        problem = skip(item)
        if problem is None:
            try:
                service(item, ItemRef(model, pk=item.pk))
            except TiddlyError as exc:
                problem = exc.message
            else:
                succeeded += 1
        if problem is not None:
            label = model._meta.verbose_name.capitalize()
            whose = "" if item.owner_id == request.user.pk else f" (owner: {item.owner})"
            messages.error(request, f"{label} “{item}”{whose} was left as it was: {problem}")
    if succeeded:
        messages.success(
            request, f"{done}: {succeeded} {model_ngettext(modeladmin.opts, succeeded)}."
        )


def _in_trash(item: Item) -> str | None:
    if item.is_deleted:
        return "It is in the trash; restore it from the trash first."
    return None


@admin.action(permissions=["change"], description="Archive selected %(verbose_name_plural)s")
def archive_selected(modeladmin: admin.ModelAdmin, request: HttpRequest, qs: QuerySet) -> None:
    _run_each(
        modeladmin,
        request,
        qs,
        lambda item, ref: services.archive_item(owner=item.owner, ref=ref, actor=ADMIN_ACTOR),
        done="Archived",
        skip=_in_trash,
    )


@admin.action(
    permissions=["change"],
    description="Restore selected archived %(verbose_name_plural)s (unarchive)",
)
def unarchive_selected(modeladmin: admin.ModelAdmin, request: HttpRequest, qs: QuerySet) -> None:
    _run_each(
        modeladmin,
        request,
        qs,
        lambda item, ref: services.unarchive_item(owner=item.owner, ref=ref, actor=ADMIN_ACTOR),
        done="Unarchived (active again)",
        skip=_in_trash,
    )


@admin.action(
    permissions=["change"], description="Move selected %(verbose_name_plural)s to the trash"
)
def trash_selected(modeladmin: admin.ModelAdmin, request: HttpRequest, qs: QuerySet) -> None:
    _run_each(
        modeladmin,
        request,
        qs,
        lambda item, ref: services.trash_item(owner=item.owner, ref=ref, actor=ADMIN_ACTOR),
        done="Moved to the trash",
        skip=lambda item: "It is already in the trash." if item.is_deleted else None,
    )


@admin.action(
    permissions=["change"], description="Restore selected %(verbose_name_plural)s from the trash"
)
def restore_selected(modeladmin: admin.ModelAdmin, request: HttpRequest, qs: QuerySet) -> None:
    _run_each(
        modeladmin,
        request,
        qs,
        lambda item, ref: services.restore_item(owner=item.owner, ref=ref, actor=ADMIN_ACTOR),
        done="Restored from the trash",
    )


@admin.action(
    permissions=["delete"],
    description="Delete selected %(verbose_name_plural)s permanently (with their history)",
)
def delete_permanently(
    modeladmin: admin.ModelAdmin, request: HttpRequest, qs: QuerySet
) -> HttpResponse | None:
    """Replaces Django's delete_selected: a confirmation page, then the service per item."""
    if not request.POST.get("post"):
        return TemplateResponse(
            request,
            "admin/content/delete_permanently_confirmation.html",
            {
                **modeladmin.admin_site.each_context(request),
                "title": "Delete permanently?",
                "subtitle": None,
                "opts": modeladmin.opts,
                "objects_name": model_ngettext(qs),
                "queryset": qs.select_related("owner"),
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                "media": modeladmin.media,
            },
        )
    _run_each(
        modeladmin,
        request,
        qs,
        lambda item, ref: services.delete_item_permanently(owner=item.owner, ref=ref),
        done="Deleted permanently",
    )
    return None


# --- item admins --------------------------------------------------------------------------------


class ItemAdmin(OwnedAdmin):
    """What the bookmark, note and prompt admins share."""

    form = ItemAdminForm
    # The first fieldset's fields, in order; subclasses name theirs.
    main_fields: ClassVar[tuple[str, ...]] = ("title", "description", "tags", "content")
    list_filter = (StateFilter, TagFilter)
    list_per_page = 50
    ordering = ("-updated_at",)
    actions = (
        archive_selected,
        unarchive_selected,
        trash_selected,
        restore_selected,
        delete_permanently,
    )
    readonly_fields = (
        "owner",
        "state",
        "content_length",
        "created_at",
        "updated_at",
        "last_used_at",
        "deleted_at",
    )
    search_help_text = "Searches title, description and content (substring, any case); or an id."

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Lists never load content (up to 10 MB each): its length comes from the database.
        return (
            super()
            .get_queryset(request)
            .defer("content")
            .annotate(content_chars=Length("content"))
            .prefetch_related("tags")
        )

    def get_search_results(
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

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, dict]]:
        main: list[str] = list(self.main_fields)
        if obj is None:
            if request.user.is_superuser:
                main.insert(0, "owner")
            return [(None, {"fields": main}), ("State", {"fields": ["archived_at"]})]
        if self.has_change_permission(request, obj):
            main.append("loaded_updated_at")  # optimistic lock: a stale save is refused
        main.insert(0, "owner")
        state = ["state", "archived_at", "deleted_at"]
        times = ["created_at", "updated_at", "last_used_at", "content_length"]
        hint = TRASH_HINT.format(self.opts.verbose_name_plural) if obj.is_deleted else None
        return [
            (None, {"fields": main, "description": hint}),
            ("State", {"fields": state + times}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is None and request.user.is_superuser:
            readonly.remove("owner")  # a superuser picks the owner of a new item
        return readonly

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Items in the trash are read-only, as in the API: restore them first.
        if obj is not None and obj.is_deleted:
            return False
        return super().has_change_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Nothing to do: the form saved through the service while it validated."""

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
        return shown, counts, set(), []

    def _change_url(self, obj: Item) -> str:
        return reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_change", args=[obj.pk])

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        services.delete_item_permanently(owner=obj.owner, ref=ItemRef(self.model, pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for item in queryset.select_related("owner"):
            self.delete_model(request, item)

    # Columns --------------------------------------------------------------------------------

    @admin.display(description="state")
    def state(self, obj: Item) -> str:
        if obj._state.adding:
            return "-"
        if obj.is_deleted:
            return f"in trash since {_when(obj.deleted_at)}"
        if obj.is_archived:
            return f"archived {_when(obj.archived_at)}"
        if obj.archived_at is not None:
            return f"active, archives {_when(obj.archived_at)}"
        return "active"

    @admin.display(description="updated", ordering="updated_at")
    def updated(self, obj: Item) -> str:
        return _when(obj.updated_at)

    @admin.display(description="tags")
    def tag_list(self, obj: Item) -> str:
        return ", ".join(obj.tag_names())

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


def _when(moment: datetime | None) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M") if moment else "-"


@admin.register(Bookmark)
class BookmarkAdmin(HistoryAdminMixin, ItemAdmin):
    main_fields = ("url", "title", "description", "tags", "content")
    list_display = ("label", "link", "owner", "state", "tag_list", "updated", "content_length")
    search_fields = ("title", "description", "url", "content")
    search_help_text = "Searches title, description, URL and content (substring); or an id."

    @admin.display(description="title", ordering="title")
    def label(self, obj: Bookmark) -> str:
        return obj.title or urlsplit(obj.url).netloc or obj.url

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


# --- tags ---------------------------------------------------------------------------------------


class TagAdminForm(ServiceForm):
    class Meta:
        model = Tag
        fields = ("name",)

    def run_service(self) -> Tag:
        tag = self.instance
        return services.rename_tag(
            owner=tag.owner, name=tag.name, new_name=self.cleaned_data["name"]
        )


def _tag_uses(model: type[Item]) -> Coalesce:
    """Items of one type carrying the tag, as a subquery (joins would multiply the counts)."""
    through = model.tags.through
    uses = (
        through.objects.filter(tag_id=OuterRef("pk"))
        .values("tag_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(uses, output_field=IntegerField()), Value(0))


@admin.register(Tag)
class TagAdmin(OwnedAdmin):
    """Tags come into being on items; here they are renamed or deleted, through the services."""

    form = TagAdminForm
    list_display = ("name", "owner", "bookmark_count", "note_count", "prompt_count", "created_at")
    search_fields = ("name",)
    readonly_fields = ("owner", "created_at", "bookmark_count", "note_count", "prompt_count")
    fields = ("name", "owner", "created_at", "bookmark_count", "note_count", "prompt_count")
    ordering = ("name",)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_bookmarks=_tag_uses(Bookmark),
                n_notes=_tag_uses(Note),
                n_prompts=_tag_uses(Prompt),
            )
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a tag is created by tagging an item

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Nothing to do: the form renamed the tag through the service while it validated."""

    def delete_model(self, request: HttpRequest, obj: Tag) -> None:
        services.delete_tag(owner=obj.owner, name=obj.name)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for tag in queryset.select_related("owner"):
            self.delete_model(request, tag)

    @admin.display(description="bookmarks", ordering="n_bookmarks")
    def bookmark_count(self, obj: Tag) -> int:
        return getattr(obj, "n_bookmarks", 0)

    @admin.display(description="notes", ordering="n_notes")
    def note_count(self, obj: Tag) -> int:
        return getattr(obj, "n_notes", 0)

    @admin.display(description="prompts", ordering="n_prompts")
    def prompt_count(self, obj: Tag) -> int:
        return getattr(obj, "n_prompts", 0)


# --- version history (read-only) ----------------------------------------------------------------

_ITEM_ADMIN_URLS = {
    "bookmark": "admin:content_bookmark_change",
    "note": "admin:content_note_change",
    "prompt": "admin:prompts_prompt_change",
}


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
            url = reverse(_ITEM_ADMIN_URLS[obj.item_type], args=[obj.item_id])
        except (KeyError, NoReverseMatch):
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
