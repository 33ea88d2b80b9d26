"""``GET /api/changes/``: the change feed (SPEC §17.1)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from content import item_types
from content.api.common import owner_of
from content.api.views import scopes_to_read
from content.history import changes as changelog
from content.models.changes import ChangeAction
from tiddly.schema import errors
from tiddly.scopes import ANY_AREA, readable_areas, require_scopes
from tiddly.serializers import StrictSerializer, optional_list, validated

MAX_LIMIT = 500


class ChangesQuerySerializer(StrictSerializer):
    since = serializers.CharField(
        required=False,
        max_length=200,
        help_text="A `next_cursor` (or a change's `cursor`) from an earlier answer; omitted = "
        "from the oldest change kept.",
    )
    type = optional_list(
        serializers.ChoiceField(choices=item_types.type_names()),
        "Repeatable: only these types (default: every type you may read).",
    )
    limit = serializers.IntegerField(
        required=False, default=100, min_value=1, max_value=MAX_LIMIT, help_text="1 to 500."
    )


class ChangeOut(serializers.Serializer):
    cursor = serializers.CharField(help_text="This change's position: a valid `since`.")
    type = serializers.CharField()
    id = serializers.UUIDField()
    name = serializers.CharField(required=False, help_text="Prompts: the name at the change.")
    action = serializers.ChoiceField(choices=ChangeAction.values)
    version = serializers.IntegerField(
        allow_null=True, help_text="The history version a created/updated change recorded."
    )
    changed_fields = serializers.ListField(child=serializers.CharField())
    # ``source`` is also a Field attribute: declared through locals() so the typed attribute of
    # the base class is not shadowed.
    locals()["source"] = serializers.CharField(
        help_text="The history source (api, admin, mcp-content, import, capture, revert, …)."
    )
    at = serializers.DateTimeField()


class ChangesOut(serializers.Serializer):
    changes = ChangeOut(many=True)
    next_cursor = serializers.CharField(help_text="Pass as `since` in the next poll.")
    has_more = serializers.BooleanField(help_text="True: poll again at once with next_cursor.")


DESCRIPTION = (
    "Your changes oldest first: every write on every path (REST, MCP, admin, import, capture, "
    "revert, version restore, links, trash, permanent deletes as `purged`). Poll with "
    "`since=next_cursor`: a poller never misses a change and never sees one twice, even while "
    "writes commit concurrently and out of order (a change is handed out only once every change "
    "before it has committed or been abandoned). Changes are kept TIDDLY_CHANGES_RETENTION_DAYS "
    "(default 90): an older cursor is 410 `cursor_expired` — resync and poll without `since`. "
    "A `type` you cannot read is 403; someone else's or a garbled `since` is 400."
)


class ChangesView(APIView):
    scope_area = ANY_AREA

    @extend_schema(
        summary="The change feed: what changed since a cursor",
        description=DESCRIPTION,
        parameters=[ChangesQuerySerializer],
        responses={200: ChangesOut, **errors(400, 410)},
        operation_id="changes_list",
        tags=["changes"],
    )
    def get(self, request: Request) -> Response:
        data = validated(ChangesQuerySerializer, request.query_params)
        readable = item_types.types_in(readable_areas(request.auth))
        types = list(dict.fromkeys(data.get("type") or readable))
        require_scopes(request.auth, scopes_to_read(types))
        owner = owner_of(request)
        return Response(
            changelog.feed_body(
                owner_id=owner.pk, since=data.get("since"), types=types, limit=data["limit"]
            )
        )
