"""``/api/search/`` and ``/api/search/status/``: finding by meaning (SPEC §16)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from content import item_types
from content.api import serializers as s
from content.api.common import owner_of
from content.api.views import scopes_to_read
from content.queries import lists
from content.search import ranking as search
from tiddly.schema import errors
from tiddly.scopes import ANY_AREA, readable_areas, require_scopes
from tiddly.serializers import validated


class SearchQuerySerializer(s.ContentListQuerySerializer):
    q = serializers.CharField(
        min_length=1, max_length=500, help_text="What to find (words, a question, a name or code)."
    )
    mode = s.QueryChoiceField(
        choices=["hybrid", "semantic", "keyword"],
        required=False,
        default="hybrid",
        help_text="hybrid (default): keyword and meaning rankings fused (RRF, k=60); semantic: "
        "by meaning alone; keyword: every word must match, as the lists' q.",
    )
    limit = serializers.IntegerField(required=False, default=20, min_value=1, max_value=50)
    min_score = serializers.FloatField(
        required=False,
        min_value=-1,
        max_value=1,
        help_text="semantic/hybrid: leave out items whose best passage's cosine is below this "
        "(default: the relevance floor calibrated for the model; -1 keeps every item). Hybrid "
        "keeps keyword hits whatever their score.",
    )
    sort_by = None  # type: ignore[assignment]  # results are ranked; no sort parameter
    sort_order = None  # type: ignore[assignment]


class MatchOut(serializers.Serializer):
    field = serializers.ChoiceField(
        choices=["title", "description", "content", "url", "name", "tags"]
    )
    start_line = serializers.IntegerField(
        allow_null=True, help_text="1-based, inclusive; feeds partial read (null off content)."
    )
    end_line = serializers.IntegerField(allow_null=True)
    snippet = serializers.CharField(help_text="<= 300 characters of the field, … where cut.")
    highlights = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="[start, end) code-point offsets of query words in snippet.",
    )


class SearchResultOut(serializers.Serializer):
    type = serializers.CharField()
    id = serializers.UUIDField()
    title = serializers.CharField(allow_null=True)
    url = serializers.CharField(required=False, allow_null=True)
    name = serializers.CharField(required=False, allow_null=True)
    score = serializers.FloatField()
    match = MatchOut()


class SearchOut(serializers.Serializer):
    results = SearchResultOut(many=True)
    count = serializers.IntegerField()
    degraded = serializers.BooleanField(
        required=False, help_text="true: the provider is down, these are keyword results."
    )


class SearchStatusOut(serializers.Serializer):
    pending = serializers.IntegerField(help_text="Items waiting to be (re)indexed.")
    vectors = serializers.IntegerField(help_text="Chunk vectors of the current model.")
    model = serializers.CharField()


class SearchView(APIView):
    scope_area = ANY_AREA

    @extend_schema(
        summary="Find items by keyword, by meaning, or both (hybrid)",
        parameters=[SearchQuerySerializer],
        responses={200: SearchOut, **errors(400, 404, 503)},
        tags=["search"],
    )
    def get(self, request: Request) -> Response:
        data: dict[str, Any] = dict(validated(SearchQuerySerializer, request.query_params))
        data.setdefault("sort_order", "desc")
        data["sort_by"] = None
        owner = owner_of(request)
        params = lists.list_params(owner, data)
        readable = item_types.types_in(readable_areas(request.auth))
        types = list(dict.fromkeys(data.get("type") or readable))
        require_scopes(request.auth, scopes_to_read(types))
        return Response(
            search.search(owner, types, params, mode=data["mode"], min_score=data.get("min_score"))
        )


class SearchStatusView(APIView):
    scope_area = ANY_AREA

    @extend_schema(
        summary="How far the meaning index has caught up with your items",
        responses={200: SearchStatusOut, **errors()},
        tags=["search"],
    )
    def get(self, request: Request) -> Response:
        return Response(search.index_status(owner_of(request)))
