"""REST: ``GET /api/export/`` (a streamed download) and ``POST /api/import/`` (multipart upload).

Thin views as elsewhere: validate the query/form with a serializer, call the use-case, shape the
response. Errors are the domain exceptions the one exception handler turns into SPEC §3.4 bodies;
authentication, the per-user read/write throttles and the 401/429 answers are DRF's defaults.

Scopes (SPEC §8.1): both views span the areas, so they declare ``scope_area = ANY_AREA`` and
check the areas they touch: an export reads only types whose ``<area>:read`` the caller holds
(asking for another type is 403; the default leaves unreadable types out), an import writes
only types whose ``<area>:write`` it holds (an entry of another type is 403, nothing saved).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from django.http import StreamingHttpResponse
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser, FormParser, MultiPartParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from content import item_types
from content.api.common import actor_for, owner_of
from content.errors import FieldLimitExceeded
from content.models import ItemState
from content.portability import exporter, importer, streaming
from tiddly.schema import downloads, errors
from tiddly.scopes import ANY_AREA, readable_areas, require_scope, scope_for
from tiddly.serializers import ErrorOut, optional_list

# Room for the multipart envelope around the file when checking Content-Length up front.
MULTIPART_OVERHEAD = 64 * 1024
TYPES = item_types.type_names()


class IgnoreFormatParameter(BaseContentNegotiation):
    """Always JSON for error bodies: ``?format=`` here picks the export format, not a renderer."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        content_type = request.content_type.split(";")[0].strip().lower()
        return next((p for p in parsers if p.media_type == content_type), None)

    def select_renderer(
        self,
        request: Request,
        renderers: Iterable[BaseRenderer],
        format_suffix: str | None = None,
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(
        choices=list(exporter.FORMATS),
        default="json",
        help_text="json: Tiddly's own format (every type; re-importable). netscape: bookmarks "
        "as the HTML file browsers import. markdown: a zip of notes and prompts as .md files "
        "with YAML front matter.",
    )
    type = optional_list(
        serializers.ChoiceField(choices=TYPES),
        "Repeatable; default every type the format holds that the caller may read.",
    )
    view = optional_list(
        serializers.ChoiceField(choices=ItemState.values),
        "Repeatable; default active and archived (everything but the trash).",
    )


class ImportFormSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="A Netscape bookmark file (HTML export of Chrome, Firefox, Safari, Edge, "
        "Pocket, linkding, karakeep…) or a Tiddly JSON export. At most TIDDLY_IMPORT_MAX_BYTES "
        "(default 50 MB)."
    )
    format = serializers.ChoiceField(
        choices=list(importer.FORMATS),
        required=False,
        help_text="Detected from the file when omitted.",
    )
    on_conflict = serializers.ChoiceField(
        choices=list(importer.CONFLICT_CHOICES),
        default="skip",
        help_text="An existing bookmark with the same URL (prompt with the same name): keep it "
        "and skip the entry, or update it from the file.",
    )
    capture = serializers.BooleanField(
        default=False,
        help_text="true: fetch the page of every imported bookmark without content in the "
        "background (page capture). Default false.",
    )


class SkippedOut(serializers.Serializer):
    index = serializers.IntegerField(
        help_text="0-based position among the file's <A> links, or in items."
    )
    reason = serializers.CharField()
    title = serializers.CharField(required=False, help_text="At most 200 characters.")
    url = serializers.CharField(required=False, help_text="At most 200 characters.")


class MatchedOut(serializers.Serializer):
    index = serializers.IntegerField(help_text="The entry's position, as in skipped.")
    type = serializers.ChoiceField(choices=TYPES)
    id = serializers.UUIDField(help_text="The existing item's id.")
    matched_by = serializers.CharField(
        help_text="How it was found: `id` (a Tiddly JSON export's id), `url` (bookmarks) or "
        "`name` (prompts)."
    )
    action = serializers.ChoiceField(choices=["updated", "skipped"])


# "from" is a Python keyword: declared fields cannot carry it.
RENAMED_TAG_FIELDS: dict[str, serializers.Field] = {
    "from": serializers.CharField(help_text="The name in the file (at most 200 characters)."),
    "to": serializers.CharField(help_text="The tag it was stored as."),
}


def _counts(name: str) -> Any:
    fields: dict[str, serializers.Field] = {t: serializers.IntegerField() for t in TYPES}
    return inline_serializer(name, fields=fields)


# Built inline: a declared field named ``errors`` would shadow ``Serializer.errors``.
ImportReportOut = inline_serializer(
    "ImportReport",
    fields={
        "created": _counts("ImportCreatedCounts"),
        "updated": _counts("ImportUpdatedCounts"),
        "skipped": SkippedOut(
            many=True, help_text="The first 1 000 skipped entries in file order (of skipped_count)."
        ),
        "skipped_count": serializers.IntegerField(help_text="How many entries were skipped."),
        "matched": MatchedOut(
            many=True,
            help_text="Entries that are items the account holds already (updated or skipped "
            "per on_conflict), and how each was found: the first 1 000 (of matched_count).",
        ),
        "matched_count": serializers.IntegerField(help_text="How many entries matched."),
        "tags_renamed": inline_serializer(
            "ImportRenamedTag",
            fields=RENAMED_TAG_FIELDS,
            many=True,
            help_text="Tag names from the file stored under another name to fit the tag rules "
            "(`C++` → `c-plus-plus`): the first 1 000 (of tags_renamed_count).",
        ),
        "tags_renamed_count": serializers.IntegerField(help_text="How many tags were renamed."),
        "errors": serializers.ListField(
            child=serializers.CharField(),
            help_text="Non-fatal file-level warnings: the first 100 (of errors_count).",
        ),
        "errors_count": serializers.IntegerField(help_text="How many warnings there were."),
    },
)


INVALID_IMPORT = OpenApiResponse(
    response=ErrorOut,
    description="invalid_import (the file is malformed or truncated; the extra field "
    "`position` holds {line, column} (1-based) or {path} (a JSONPath into a Tiddly JSON file); "
    "nothing was saved), field_limit_exceeded (file larger than "
    "TIDDLY_IMPORT_MAX_BYTES) or validation_error.",
    examples=[
        OpenApiExample(
            "Truncated file",
            value={
                "error": "invalid_import",
                "message": "The file ends inside folder 'Dev' opened on line 9: it looks "
                "truncated. … (line 14, column 1). Nothing was imported.",
                "position": {"line": 14, "column": 1},
            },
        )
    ],
)


class ExportView(APIView):
    scope_area = ANY_AREA  # each exported type's <area>:read, checked in get()
    content_negotiation_class = IgnoreFormatParameter

    @extend_schema(
        operation_id="export",
        summary="Export your items (streamed download)",
        description="A file download (`Content-Disposition: attachment`) streamed item by item. "
        "The JSON format is documented in the README; Netscape holds bookmarks only; Markdown "
        "is a zip of notes and prompts.",
        parameters=[ExportQuerySerializer],
        responses={
            **downloads(
                ("application/json", OpenApiTypes.OBJECT, "Tiddly JSON export (format=json)."),
                ("text/html", OpenApiTypes.STR, "Netscape bookmark file (format=netscape)."),
                (
                    "application/zip",
                    OpenApiTypes.BINARY,
                    "Zip of Markdown files (format=markdown).",
                ),
            ),
            **errors(400, 403),
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        serializer = ExportQuerySerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        query = serializer.validated_data
        export = exporter.export_items(
            owner=owner_of(request),
            format=query["format"],
            types=_readable_types(request, query["format"], query.get("type")),
            views=query.get("view"),
        )
        return streaming.download(request._request, export)


def _readable_types(request: Request, format: str, asked: list[str] | None) -> list[str]:
    """The types to export: those asked for (each needs its area's read scope) or, by default,
    the format's types the caller may read (all of them when it may read none: then 403)."""
    if not asked:
        held = readable_areas(request.auth)
        every = [t for t in exporter.format_types(format) if t in TYPES]
        asked = [t for t in every if item_types.model_for(t).scope_area in held] or every
    for name in asked:
        require_scope(request.auth, scope_for(item_types.model_for(name).scope_area, "GET"))
    return asked


class ImportView(APIView):
    scope_area = ANY_AREA  # each imported type's <area>:write, checked by the importer
    parser_classes = [MultiPartParser, FormParser]
    content_negotiation_class = IgnoreFormatParameter

    @extend_schema(
        operation_id="import",
        summary="Import bookmarks or a Tiddly export (multipart upload)",
        description="One transaction: a malformed file is 400 invalid_import and saves nothing; "
        "entries that cannot be imported are listed in `skipped` with the reason.",
        request={"multipart/form-data": ImportFormSerializer},
        responses={200: ImportReportOut, 400: INVALID_IMPORT, **errors(403, 409)},
    )
    def post(self, request: Request) -> Response:
        _check_request_size(request)
        serializer = ImportFormSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        form = serializer.validated_data
        upload = form["file"]
        report = importer.import_items(
            owner=owner_of(request),
            stream=upload,
            size=upload.size,
            format=form.get("format"),
            on_conflict=form["on_conflict"],
            # History says "import" whatever X-Request-Source says (SPEC §14).
            actor=replace(actor_for(request), source="import"),
            principal=request.auth,
            capture=form["capture"],
        )
        return Response(report.as_dict())


def _check_request_size(request: Request) -> None:
    """Refuse an oversized upload from its Content-Length, before it is spooled to disk."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    limit = importer.max_import_bytes()
    if length > limit + MULTIPART_OVERHEAD:
        raise FieldLimitExceeded("file", length, limit, unit="bytes")


urlpatterns = [
    path("export/", ExportView.as_view(), name="export"),
    path("import/", ImportView.as_view(), name="import"),
]
