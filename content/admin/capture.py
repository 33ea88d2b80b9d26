"""Page capture in the bookmark admin (SPEC §15): status column and filter, "Capture again",
and the capture (with its error) on the change page."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from content.admin.actions import _in_trash, _run_each
from content.models import Bookmark, CaptureStatus
from content.services import capture as capture_service
from content.templatetags.tiddly_time import time_html

NEVER = "never"


class CaptureStatusFilter(admin.SimpleListFilter):
    title = "capture"
    parameter_name = "capture"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(NEVER, "never captured"), *CaptureStatus.choices]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == NEVER:
            return queryset.filter(capture__isnull=True)
        if value in CaptureStatus.values:
            return queryset.filter(capture__status=value)
        return queryset


def _capture(obj: Bookmark) -> Any:
    try:
        return obj.capture
    except ObjectDoesNotExist:
        return None


@admin.display(description="capture", ordering="capture__status")
def capture_status(obj: Bookmark) -> str:
    capture = _capture(obj)
    if capture is None:
        return "-"
    if capture.error:
        return format_html('<span title="{}">{}</span>', capture.error, capture.status)
    return str(capture.status)


# A submit button of the change form that posts to ``BookmarkAdmin.capture_view`` instead (the
# change form's CSRF token goes along; no nested form, no script).
CAPTURE_BUTTON = mark_safe(
    '<p><button type="submit" class="button" formaction="capture/" formmethod="post" '
    'formnovalidate id="capture-again">Capture again</button> '
    '<span class="help">Fetch the page now (in the background); fills blank fields.</span></p>'
)


@admin.display(description="capture")
def capture_details(obj: Bookmark) -> str:
    capture = _capture(obj)
    button = CAPTURE_BUTTON if not obj.is_deleted else ""
    if capture is None:
        return format_html("Never captured.{}", button)
    return format_html(
        "<strong>{}</strong> · requested {} · finished {} · attempts {} · HTTP {} · {}<br>"
        "final URL: {}<br>error: {}{}",
        capture.status,
        time_html(capture.requested_at),
        time_html(capture.finished_at) if capture.finished_at else "-",
        capture.attempts,
        capture.http_status or "-",
        capture.content_type or "-",
        capture.final_url or "-",
        capture.error or "-",
        button,
    )


@admin.action(description="Capture again (fetch the page; fill blank fields)")
def capture_again(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    _run_each(
        modeladmin,
        request,
        queryset,
        lambda item, ref: capture_service.capture_again(owner=item.owner, ref=ref),
        done="Capture queued",
        skip=_in_trash,
    )
