"""``/api/{type}/{id}/related/`` and ``/suggestions/`` (SPEC §16), mixed into each item viewset."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from content import item_types
from content.api.common import owner_of
from content.search import related
from tiddly.schema import errors
from tiddly.scopes import readable_areas
from tiddly.serializers import validated


class RelatedQuerySerializer(serializers.Serializer):
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=50)


class NeighbourOut(serializers.Serializer):
    type = serializers.CharField()
    id = serializers.UUIDField()
    title = serializers.CharField(allow_null=True)
    score = serializers.FloatField(help_text="Cosine similarity of the best chunk.")


class RelatedOut(NeighbourOut):
    linked = serializers.BooleanField(help_text="A relationship (SPEC §12) links the two.")


class RelatedListOut(serializers.Serializer):
    results = RelatedOut(many=True)


class TagSuggestionOut(serializers.Serializer):
    name = serializers.CharField()
    score = serializers.FloatField()


class SuggestionsOut(serializers.Serializer):
    tags = TagSuggestionOut(many=True, help_text="Tags the item lacks; never applied for you.")
    related = NeighbourOut(many=True)


class MeaningActions:
    """Needs the viewset's ``load()`` (the owner's item, else 404)."""

    load: Any

    @extend_schema(
        summary="The nearest items by meaning",
        parameters=[RelatedQuerySerializer],
        responses={200: RelatedListOut, **errors(400, 404, 503)},
    )
    @action(detail=True, methods=["get"])
    def related(self, request: Request, pk: str) -> Response:
        query = validated(RelatedQuerySerializer, request.query_params)
        # Only the types the token may read (a content-only token sees no prompt's title).
        readable = item_types.types_in(readable_areas(request.auth))
        rows = related.related(owner_of(request), self.load(), query["limit"], readable)
        return Response({"results": rows})

    @extend_schema(
        summary="Suggested tags and related items (never applied automatically)",
        responses={200: SuggestionsOut, **errors(404, 503)},
    )
    @action(detail=True, methods=["get"])
    def suggestions(self, request: Request, pk: str) -> Response:
        readable = item_types.types_in(readable_areas(request.auth))
        return Response(related.suggestions(owner_of(request), self.load(), readable))
