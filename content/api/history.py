"""REST endpoints for version history (SPEC §6), mixed into every item ViewSet.

``GET …/history/`` lists versions and events, ``GET …/history/{v}/`` reads a version (partial
read works as on the item), ``GET …/history/{v}/diff/`` shows what that version changed, and
``POST …/history/{v}/restore/`` puts it back through the normal update path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from content import history, queries, services, shapes
from content.api import serializers as s
from content.api.common import actor_for, owner_of, paginated, precondition
from content.models import HistoryAction, Item
from content.queries import ItemRef
from tiddly.schema import errors
from tiddly.serializers import optional_list, rename_fields, validated

VERSION_PATH = r"history/(?P<version>[0-9]+)"

VERSION = OpenApiParameter(
    "version", int, OpenApiParameter.PATH, description="Version number (1, 2, 3…) from the list."
)


# --- request and response shapes ----------------------------------------------------------------


@rename_fields(source_="source")
class HistoryQuerySerializer(serializers.Serializer):
    action = optional_list(
        serializers.ChoiceField(choices=HistoryAction.values),
        "Only these actions (repeatable).",
    )
    source_ = optional_list(
        serializers.CharField(),
        "Only these sources, e.g. api, admin, mcp-content (repeatable).",
    )
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=100)
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=10**9)


class DiffQuerySerializer(serializers.Serializer):
    context_lines = serializers.IntegerField(
        required=False,
        default=3,
        min_value=0,
        max_value=20,
        help_text="Unchanged lines shown around each change.",
    )


class HistoryMetadataOut(serializers.Serializer):
    title = serializers.CharField(allow_null=True)
    description = serializers.CharField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())
    url = serializers.CharField(required=False, help_text="Bookmarks.")
    name = serializers.CharField(required=False, help_text="Prompts.")
    arguments = serializers.ListField(
        child=serializers.DictField(), required=False, help_text="Prompts."
    )


@rename_fields(source_="source")
class HistoryEntryOut(serializers.Serializer):
    id = serializers.UUIDField()
    version = serializers.IntegerField(
        allow_null=True, help_text="1, 2, 3… for create/update/restore; null for state events."
    )
    action = serializers.ChoiceField(choices=HistoryAction.values)
    changed_fields = serializers.ListField(child=serializers.CharField())
    metadata = HistoryMetadataOut(help_text="Title, description, tags (and url/name/arguments).")
    source_ = serializers.CharField(help_text="api, admin, mcp-content, mcp-prompts or a client's.")
    token_prefix = serializers.CharField(
        allow_null=True, help_text="Display prefix of the API token used."
    )
    created_at = serializers.DateTimeField()


class VersionOut(HistoryEntryOut):
    item_id = serializers.UUIDField()
    type = serializers.CharField()
    content = serializers.CharField(allow_null=True)
    content_metadata = s.ContentMetadataSerializer(allow_null=True)


class DiffOut(serializers.Serializer):
    version = serializers.IntegerField()
    previous_version = serializers.IntegerField(allow_null=True)
    action = serializers.ChoiceField(choices=HistoryAction.values)
    changed_fields = serializers.ListField(child=serializers.CharField())
    content_changed = serializers.BooleanField()
    diff = serializers.CharField(help_text="Unified diff of the content; empty if unchanged.")
    truncated = serializers.BooleanField(
        help_text="The diff was cut short; read the version itself with start_line/end_line."
    )
    lines_added = serializers.IntegerField()
    lines_removed = serializers.IntegerField()
    before_metadata = HistoryMetadataOut(
        allow_null=True, help_text="Null for version 1 or when the previous version was pruned."
    )
    after_metadata = HistoryMetadataOut()


HistoryPageOut = s.page_serializer(HistoryEntryOut, "PaginatedHistoryEntryList")


def _restore_out(full: type[serializers.Serializer], label: str) -> type[serializers.Serializer]:
    return type(
        f"{label.title()}VersionRestoreOut",
        (serializers.Serializer,),
        {
            "restored_from": serializers.IntegerField(),
            "version": serializers.IntegerField(
                help_text="The item's version number now (the new `restore` version)."
            ),
            "item": full(),
        },
    )


LIST_DESCRIPTION = (
    "Every create, update, str-replace and restore is a numbered version; archive, unarchive, "
    "delete and restore-from-trash are events without a number. Newest first. Works for items "
    "in the trash too."
)
RESTORE_DESCRIPTION = (
    "Sets the content and metadata (title, description, tags, url/name, arguments) back to this "
    "version through the normal update path — the same validation, uniqueness and template "
    "checks — and records a new `restore` version. The archive state is not changed. 400 for the "
    "current version; 404 for an item in the trash (restore it first); 409 if its URL or name "
    "now belongs to another item."
)


def history_schemas(
    full: type[serializers.Serializer], label: str, write_headers: list[OpenApiParameter]
) -> dict[str, Any]:
    """Per-type OpenAPI for the history actions, for the item ViewSet's ``extend_schema_view``."""
    return {
        "history": extend_schema(
            summary=f"List a {label}'s versions and events",
            description=LIST_DESCRIPTION,
            parameters=[HistoryQuerySerializer],
            operation_id=f"{label}s_history_list",
            responses={200: HistoryPageOut, **errors(400, 404)},
        ),
        "history_version": extend_schema(
            summary=f"Get a {label} as it was at a version (optionally only some lines)",
            operation_id=f"{label}s_history_version_retrieve",
            parameters=[VERSION, s.LineRangeQuerySerializer],
            responses={200: VersionOut, **errors(400, 404)},
        ),
        "history_diff": extend_schema(
            summary=f"What a version of a {label} changed (unified diff + metadata)",
            operation_id=f"{label}s_history_diff_retrieve",
            parameters=[VERSION, DiffQuerySerializer],
            responses={200: DiffOut, **errors(400, 404)},
        ),
        "history_restore": extend_schema(
            summary=f"Restore a {label} to a version",
            description=RESTORE_DESCRIPTION,
            operation_id=f"{label}s_history_restore_create",
            parameters=[VERSION, *write_headers],
            request=None,
            responses={200: _restore_out(full, label), **errors(400, 404, 409, 412)},
        ),
    }


# --- the endpoints ------------------------------------------------------------------------------


class HistoryActions(viewsets.GenericViewSet):
    """The history endpoints of an item ViewSet (which provides ``model`` and ``ref()``)."""

    model: ClassVar[type[Item]]

    def ref(self) -> ItemRef:  # pragma: no cover - provided by the ViewSet
        raise NotImplementedError

    def history_item(self) -> Item:
        return queries.get_owned_head(owner_of(self.request), self.ref())

    @action(detail=True, methods=["get"], url_path="history")
    def history(self, request: Request, pk: str) -> Response:
        item = self.history_item()
        query = validated(HistoryQuerySerializer, request.query_params)
        page = _Page(query["limit"], query["offset"])
        total, entries = queries.history_page(
            item,
            limit=page.limit,
            offset=page.offset,
            actions=query.get("action"),
            sources=query.get("source"),
        )
        return paginated(request, total, entries, page)

    @action(detail=True, methods=["get"], url_path=VERSION_PATH)
    def history_version(self, request: Request, pk: str, version: str) -> Response:
        item = self.history_item()
        query = validated(s.LineRangeQuerySerializer, request.query_params)
        return Response(queries.version_data(item, int(version), **query))

    @action(detail=True, methods=["get"], url_path=f"{VERSION_PATH}/diff")
    def history_diff(self, request: Request, pk: str, version: str) -> Response:
        item = self.history_item()
        query = validated(DiffQuerySerializer, request.query_params)
        return Response(queries.diff_data(item, int(version), context=query["context_lines"]))

    @action(detail=True, methods=["post"], url_path=f"{VERSION_PATH}/restore")
    def history_restore(self, request: Request, pk: str, version: str) -> Response:
        item = services.restore_version(
            owner=owner_of(request),
            ref=self.ref(),
            version=int(version),
            actor=actor_for(request),
            precondition=precondition(request),
        )
        response = Response(
            {
                "restored_from": int(version),
                "version": history.latest_version(item),
                "item": shapes.item_data(item),
            }
        )
        response["ETag"] = shapes.etag(item)
        return response


@dataclass(frozen=True)
class _Page:
    limit: int
    offset: int
