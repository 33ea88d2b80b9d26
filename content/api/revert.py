"""``POST /api/history/revert/``: undo everything one API token changed since a time (SPEC §6)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from content import item_types, revert
from content.api.common import actor_for, owner_of
from tiddly.schema import errors
from tiddly.scopes import ANY_AREA, writable_areas
from tiddly.serializers import StrictSerializer, StringField, validated


class RevertSerializer(StrictSerializer):
    token_prefix = StringField(
        max_length=12, help_text="Display prefix of the API token whose changes to undo."
    )
    since = serializers.DateTimeField(
        help_text="ISO 8601: undo the token's changes made at or after this time."
    )
    force = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Also revert items someone else changed after the token (their changes are "
        "lost) instead of reporting them as conflicts.",
    )


class RevertedOut(serializers.Serializer):
    type = serializers.CharField()
    id = serializers.UUIDField()
    version = serializers.IntegerField(help_text="The new version recorded (source `revert`).")


class TrashedOut(serializers.Serializer):
    type = serializers.CharField()
    id = serializers.UUIDField()


class ConflictOut(serializers.Serializer):
    type = serializers.CharField()
    id = serializers.UUIDField()
    reason = serializers.CharField(help_text="Why the item was left as it is.")


class RevertOut(serializers.Serializer):
    reverted = RevertedOut(many=True)
    trashed = TrashedOut(many=True, help_text="Items the token created, moved to the trash.")
    conflicts = ConflictOut(many=True)


DESCRIPTION = (
    "Every item of yours that the token changed since `since` goes back to its version before "
    "the token's first change in that window (one new version per item, source `revert`); "
    "items the token created go to the trash. Items someone else changed after the token are "
    "reported as conflicts and left alone unless `force` is true. Repeating the same revert "
    "changes nothing more. Only your own items are ever touched."
)


class RevertView(APIView):
    serializer_class = RevertSerializer  # the browsable API's form
    # A caller with the write scope of one area reverts only that area's items.
    scope_area = ANY_AREA

    @extend_schema(
        summary="Revert everything an API token changed since a time",
        description=DESCRIPTION,
        request=RevertSerializer,
        responses={200: RevertOut, **errors(400)},
        operation_id="history_revert",
    )
    def post(self, request: Request) -> Response:
        data = validated(RevertSerializer, request.data)
        report = revert.revert_token(
            owner=owner_of(request),
            token_prefix=data["token_prefix"],
            since=data["since"],
            force=data["force"],
            actor=actor_for(request),
            types=item_types.types_in(writable_areas(request.auth)),
        )
        return Response(report.data())
