"""``POST /api/history/revert/``: undo everything one API token changed since a time (SPEC §6)."""

from __future__ import annotations

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from content import item_types
from content.api.common import actor_for, owner_of
from content.services import revert
from tiddly.schema import errors
from tiddly.scopes import ANY_AREA, writable_areas
from tiddly.serializers import (
    StrictSerializer,
    StringField,
    off_unless,
    validated,
)


class RevertSerializer(StrictSerializer):
    token_prefix = StringField(
        max_length=12, help_text="Display prefix of the API token whose changes to undo."
    )
    since = serializers.DateTimeField(
        help_text="ISO 8601: undo the token's changes made at or after this time."
    )
    force = off_unless(
        "Also revert items someone else changed after the token (their changes are "
        "lost) instead of reporting them as conflicts."
    )
    dry_run = off_unless(
        "Write nothing; answer how many items the whole revert would revert, trash "
        "and leave as conflicts."
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
    remaining = serializers.IntegerField(
        help_text="Items still to revert or trash after this batch: repeat the same request "
        "until it is 0."
    )


class RevertPlanOut(serializers.Serializer):
    dry_run = serializers.BooleanField(help_text="Always true: nothing was written.")
    reverted = serializers.IntegerField(help_text="Items the whole revert would revert.")
    trashed = serializers.IntegerField(help_text="Items it would move to the trash.")
    conflicts = serializers.IntegerField(help_text="Items it would leave as they are.")


DESCRIPTION = (
    "Every item of yours that the token changed since `since` goes back to its version before "
    "the token's first change in that window (one new version per item, source `revert`); "
    "items the token created go to the trash. Items someone else changed after the token are "
    "reported as conflicts and left alone unless `force` is true. Repeating the same revert "
    "changes nothing more. Only your own items are ever touched. One request changes at most "
    "TIDDLY_REVERT_BATCH (default 500) items and answers `remaining`: repeat the same request "
    "until it is 0 (conflicts are listed, not counted against the batch). `dry_run: true` "
    "answers the counts of the whole revert and writes nothing."
)


class RevertView(APIView):
    serializer_class = RevertSerializer  # the browsable API's form
    # A caller with the write scope of one area reverts only that area's items.
    scope_area = ANY_AREA

    @extend_schema(
        summary="Revert everything an API token changed since a time",
        description=DESCRIPTION,
        request=RevertSerializer,
        responses={
            200: PolymorphicProxySerializer(
                component_name="RevertResult",
                serializers=[RevertOut, RevertPlanOut],
                resource_type_field_name=None,
            ),
            **errors(400),
        },
        operation_id="history_revert",
    )
    def post(self, request: Request) -> Response:
        data = validated(RevertSerializer, request.data)
        scope = {
            "owner": owner_of(request),
            "token_prefix": data["token_prefix"],
            "since": data["since"],
            "force": data["force"],
            "types": item_types.types_in(writable_areas(request.auth)),
        }
        if data["dry_run"]:
            return Response(revert.summarize(revert.plan_revert(**scope)))
        report = revert.revert_token(**scope, actor=actor_for(request))
        return Response(report.data())
