"""REST for saved filters (SPEC §11): ``/api/filters/`` and ``/api/filters/{id}/``."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from content import item_types, queries, services
from content.models import SortKey, SortOrder
from tiddly.schema import errors
from tiddly.scopes import ANY_AREA
from tiddly.serializers import StrictSerializer, StringField, validated


class GroupIn(StrictSerializer):
    tags = serializers.ListField(
        child=StringField(), help_text="An item matches the group when it has ALL these tags."
    )


class ExpressionIn(StrictSerializer):
    groups = GroupIn(
        many=True, help_text="An item matches the filter when it matches ANY group; [] = all."
    )
    group_operator = serializers.ChoiceField(choices=["or"], required=False, default="or")


class FilterWrite(StrictSerializer):
    name = StringField(help_text="1-100 characters, unique among your filters.")
    content_types = serializers.ListField(
        child=serializers.ChoiceField(choices=item_types.type_names()),
        help_text="The item types the filter shows (non-empty).",
    )
    expression = ExpressionIn()
    default_sort_by = serializers.ChoiceField(
        choices=SortKey.values,
        required=False,
        allow_null=True,
        help_text="Sort of lists using the filter unless they give sort_by (null = the list's "
        "default).",
    )
    default_sort_order = serializers.ChoiceField(choices=SortOrder.values, required=False)


class FilterUpdate(FilterWrite):
    name = StringField(required=False)
    content_types = serializers.ListField(
        child=serializers.ChoiceField(choices=item_types.type_names()), required=False
    )
    expression = ExpressionIn(required=False)


class GroupOut(serializers.Serializer):
    tags = serializers.ListField(child=serializers.CharField())


class ExpressionOut(serializers.Serializer):
    groups = GroupOut(many=True)
    group_operator = serializers.ChoiceField(choices=["or"])


class FilterOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    content_types = serializers.ListField(child=serializers.CharField())
    expression = ExpressionOut()
    default_sort_by = serializers.ChoiceField(choices=SortKey.values, allow_null=True)
    default_sort_order = serializers.ChoiceField(choices=SortOrder.values)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


@extend_schema_view(
    list=extend_schema(
        summary="List your saved filters", responses={200: FilterOut(many=True), **errors()}
    ),
    create=extend_schema(
        summary="Create a saved filter",
        description="Tags are normalised like item tags (invalid → 400 naming the tag) and "
        "created if missing. A taken name → 409 name_conflict.",
        request=FilterWrite,
        responses={201: FilterOut, **errors(400, 409)},
    ),
    retrieve=extend_schema(summary="Get a saved filter", responses={200: FilterOut, **errors(404)}),
    partial_update=extend_schema(
        summary="Update a saved filter",
        description="Absent fields stay; expression and content_types are full replacements.",
        request=FilterUpdate,
        responses={200: FilterOut, **errors(400, 404, 409)},
    ),
    destroy=extend_schema(summary="Delete a saved filter", responses={204: None, **errors(404)}),
)
class FilterViewSet(viewsets.GenericViewSet):
    # Filters name item types of both areas: reading needs one area's read scope, changing
    # one needs one area's write scope.
    scope_area = ANY_AREA
    serializer_class = FilterWrite  # for the browsable API's form
    lookup_value_regex = "[^/]+"

    def get_queryset(self) -> Any:
        return queries.owned_filters(self.request.user)

    def list(self, request: Request) -> Response:
        return Response([queries.filter_data(f) for f in self.get_queryset()])

    def create(self, request: Request) -> Response:
        data = validated(FilterWrite, request.data)
        saved = services.create_filter(owner=request.user, data=data)
        return Response(queries.filter_data(saved), status=status.HTTP_201_CREATED)

    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(queries.filter_data(queries.get_filter(request.user, pk)))

    def partial_update(self, request: Request, pk: str) -> Response:
        data = validated(FilterUpdate, request.data)
        saved = services.update_filter(owner=request.user, filter_id=pk, data=data)
        return Response(queries.filter_data(saved))

    def destroy(self, request: Request, pk: str) -> Response:
        services.delete_filter(owner=request.user, filter_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
