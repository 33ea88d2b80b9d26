"""Lifecycle actions on item lists: one service call per selected item, failures named."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import model_ngettext
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from content import services
from content.admin.forms import ADMIN_ACTOR
from content.models import Item
from content.queries import ItemRef
from tiddly.errors import TiddlyError

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


Action = Callable[[admin.ModelAdmin, HttpRequest, QuerySet], None]


def lifecycle_action(
    name: str,
    description: str,
    service: Callable[..., Any],
    *,
    done: str,
    skip: Callable[[Item], str | None] = lambda item: None,
) -> Action:
    """An admin action calling ``service(owner=, ref=, actor=ADMIN_ACTOR)`` per selected item."""

    def action(modeladmin: admin.ModelAdmin, request: HttpRequest, qs: QuerySet) -> None:
        def call(item: Item, ref: ItemRef) -> Any:
            return service(owner=item.owner, ref=ref, actor=ADMIN_ACTOR)

        _run_each(modeladmin, request, qs, call, done=done, skip=skip)

    action.__name__ = action.__qualname__ = name
    return admin.action(permissions=["change"], description=description)(action)


def _already_trashed(item: Item) -> str | None:
    return "It is already in the trash." if item.is_deleted else None


archive_selected = lifecycle_action(
    "archive_selected",
    "Archive selected %(verbose_name_plural)s",
    services.archive_item,
    done="Archived",
    skip=_in_trash,
)
unarchive_selected = lifecycle_action(
    "unarchive_selected",
    "Restore selected archived %(verbose_name_plural)s (unarchive)",
    services.unarchive_item,
    done="Unarchived (active again)",
    skip=_in_trash,
)
trash_selected = lifecycle_action(
    "trash_selected",
    "Move selected %(verbose_name_plural)s to the trash",
    services.trash_item,
    done="Moved to the trash",
    skip=_already_trashed,
)
restore_selected = lifecycle_action(
    "restore_selected",
    "Restore selected %(verbose_name_plural)s from the trash",
    services.restore_item,
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
        lambda item, ref: services.delete_item_permanently(
            owner=item.owner, ref=ref, actor=ADMIN_ACTOR
        ),
        done="Deleted permanently",
    )
    return None
