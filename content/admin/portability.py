"""Import and export in the admin (SPEC §9, §14): an Import page and "Export selected" actions.

Both call the same use-cases as ``/api/import/`` and ``/api/export/``: the Import page hands the
upload to ``importer.import_items`` (one transaction, history source ``import``) and shows its
report; the export actions stream ``exporter.export_items`` for the selected items. Every item
list gets both, so the admin mixes this into ``ItemAdmin``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from content.history import Actor
from content.models import ItemState
from content.portability import exporter, importer, streaming
from content.queries import Owner
from tiddly.errors import TiddlyError

IMPORT_ACTOR = Actor(source="import")
FORMAT_LABELS = {"json": "Tiddly JSON", "netscape": "Netscape HTML", "markdown": "Markdown (zip)"}
# The report page lists this many skipped entries; the counts cover all of them.
SHOWN_SKIPS = 200


class ImportForm(forms.Form):
    file = forms.FileField(
        help_text="A bookmark file exported as HTML by a browser or service (Chrome, Firefox, "
        "Safari, Edge, Pocket, linkding, karakeep…) or a Tiddly JSON export."
    )
    format = forms.ChoiceField(
        choices=[("", "Detect from the file"), ("netscape", "Netscape HTML"), ("json", "JSON")],
        required=False,
    )
    on_conflict = forms.ChoiceField(
        label="Existing URL or prompt name",
        choices=[("skip", "Keep mine, skip the entry"), ("update", "Update mine from the file")],
        initial="skip",
    )


def _export_action(format: str) -> Callable[..., HttpResponseBase | None]:
    def export(
        modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet
    ) -> HttpResponseBase | None:
        owners = list(queryset.order_by().values_list("owner", flat=True).distinct()[:2])
        if len(owners) != 1:
            # An export is one person's file (a superuser sees everyone's items).
            messages.error(request, "Select items of one owner to export them together.")
            return None
        found = exporter.export_items(
            owner=Owner.objects.get(pk=owners[0]),
            format=format,
            types=[modeladmin.model.type_name],
            views=ItemState.values,
            ids=queryset.prefetch_related(None).order_by().values("pk"),
        )
        return streaming.download(request, found)

    export.__name__ = f"export_{format}"
    return admin.action(
        permissions=["view"],
        description=f"Export selected %(verbose_name_plural)s as {FORMAT_LABELS[format]}",
    )(export)


EXPORT_ACTIONS = {format: _export_action(format) for format in exporter.FORMATS}


class PortabilityAdminMixin(admin.ModelAdmin):
    """Adds ``<list>/import/`` (linked from the list's tools) and one export action per format
    that holds the list's type (bookmarks: JSON, Netscape; notes and prompts: JSON, Markdown)."""

    change_list_template = "admin/content/item_change_list.html"

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}_import"
        view = self.admin_site.admin_view(self.import_view)
        return [path("import/", view, name=name), *super().get_urls()]

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        for format, action in EXPORT_ACTIONS.items():
            if self.model.type_name in exporter.format_types(format):
                found = self.get_action(action)
                if found is not None and self.has_view_permission(request):
                    actions[found[1]] = found
        return actions

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        url = reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_import")
        return super().changelist_view(request, {"import_url": url, **(extra_context or {})})

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload a file into the signed-in user's account, then show the import's report."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = ImportForm(request.POST or None, request.FILES or None)
        report = None
        if request.method == "POST" and form.is_valid():
            report = self._run_import(request, form)
        context = {
            **self.admin_site.each_context(request),
            "title": "Import bookmarks, notes and prompts",
            "subtitle": None,
            "opts": self.opts,
            "form": form,
            "report": report,
            "skipped": report["skipped"][:SHOWN_SKIPS] if report else [],
            "max_mb": importer.max_import_bytes() / 1024 / 1024,
        }
        return TemplateResponse(request, "admin/content/import.html", context)

    def _run_import(self, request: HttpRequest, form: ImportForm) -> dict[str, Any] | None:
        upload = form.cleaned_data["file"]
        assert isinstance(request.user, Owner)
        try:
            report = importer.import_items(
                owner=request.user,
                stream=upload,
                size=upload.size,
                format=form.cleaned_data["format"] or None,
                on_conflict=form.cleaned_data["on_conflict"],
                actor=IMPORT_ACTOR,
            )
        except TiddlyError as exc:
            form.add_error("file", exc.message)
            return None
        return report.as_dict()
