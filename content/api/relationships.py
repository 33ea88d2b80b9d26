"""REST for links between items (SPEC §12): ``/api/relationships/`` and ``/{id}/``."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from content import item_types
from content.api.common import SOURCE, actor_for, paginated
from content.api.serializers import page_serializer
from content.models import Relationship
from content.services import relationships
from content.services.relationships import End
from tiddly.schema import errors
from tiddly.serializers import StrictSerializer, optional_text, validated

TYPES = item_types.type_names()


class LinkCreate(StrictSerializer):
    source_type = serializers.ChoiceField(choices=TYPES)
    source_id = serializers.UUIDField()
    target_type = serializers.ChoiceField(choices=TYPES)
    target_id = serializers.UUIDField()
    description = optional_text(help_text="Why the items belong together (≤ 500 characters).")


class LinkUpdate(StrictSerializer):
    description = optional_text(help_text="The new description; null clears it.")


class LinkListQuery(serializers.Serializer):
    type = serializers.ChoiceField(
        choices=TYPES, required=False, help_text="With id: only this item's links."
    )
    id = serializers.UUIDField(required=False, help_text="With type: only this item's links.")
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=100)
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=10**9)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("type" in attrs) != ("id" in attrs):
            raise serializers.ValidationError(
                {"type": ["Give type and id together (one item's links), or neither (all)."]}
            )
        return attrs


class LinkOut(serializers.Serializer):
    """Links are undirected: the ends are stored (and shown) in a canonical order, so source and
    target may be swapped relative to the request that made the link."""

    id = serializers.UUIDField()
    source_type = serializers.CharField()
    source_id = serializers.UUIDField()
    target_type = serializers.CharField()
    target_id = serializers.UUIDField()
    description = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


@extend_schema_view(
    list=extend_schema(
        summary="List links (all yours, or one item's with type and id)",
        parameters=[LinkListQuery],
        responses={
            200: page_serializer(LinkOut, "PaginatedLinkList"),
            **errors(400, 404),
        },
    ),
    create=extend_schema(
        summary="Link two items (idempotent)",
        description="201 with the new link, or 200 with the existing one when the two items are "
        "already linked (in either order). Self-link → 400; an item with 50 links → 400 "
        "field_limit_exceeded; another owner's (or a trashed) item on either end → 404.",
        parameters=[SOURCE],
        request=LinkCreate,
        responses={
            201: LinkOut,
            200: OpenApiResponse(LinkOut, description="The items were already linked."),
            **errors(400, 404),
        },
    ),
    retrieve=extend_schema(summary="Get a link", responses={200: LinkOut, **errors(404)}),
    partial_update=extend_schema(
        summary="Change a link's description",
        request=LinkUpdate,
        responses={200: LinkOut, **errors(400, 404)},
    ),
    destroy=extend_schema(
        summary="Remove a link", parameters=[SOURCE], responses={204: None, **errors(404)}
    ),
)
class RelationshipViewSet(viewsets.GenericViewSet):
    scope_area = "content"  # links are content (SPEC §8.1), whatever the types of their ends
    serializer_class = LinkCreate  # for the browsable API's form
    lookup_value_regex = "[^/]+"

    def get_queryset(self) -> Any:
        owner: Any = self.request.user
        return Relationship.objects.filter(owner=owner)

    def list(self, request: Request) -> Response:
        query = validated(LinkListQuery, request.query_params)
        links = self.get_queryset()
        if "type" in query:
            links = relationships.links_of(request.user, End(query["type"], query["id"]))
        links = links.order_by("id")
        total = links.count()
        page = links[query["offset"] : query["offset"] + query["limit"]]
        bounds = _Bounds(query["offset"], query["limit"])
        return paginated(request, total, [relationships.link_data(x) for x in page], bounds)

    def create(self, request: Request) -> Response:
        data = validated(LinkCreate, request.data)
        link, created = relationships.create_link(
            owner=request.user,
            source=End(data["source_type"], data["source_id"]),
            target=End(data["target_type"], data["target_id"]),
            description=data.get("description"),
            actor=actor_for(request),
        )
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(relationships.link_data(link), status=code)

    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(relationships.link_data(relationships.get_link(request.user, pk)))

    def partial_update(self, request: Request, pk: str) -> Response:
        data = validated(LinkUpdate, request.data)
        if "description" not in data:  # nothing to change
            link = relationships.get_link(request.user, pk)
        else:
            link = relationships.describe_link(
                owner=request.user, link_id=pk, description=data["description"]
            )
        return Response(relationships.link_data(link))

    def destroy(self, request: Request, pk: str) -> Response:
        relationships.delete_link(owner=request.user, link_id=pk, actor=actor_for(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class _Bounds:
    def __init__(self, offset: int, limit: int) -> None:
        self.offset, self.limit = offset, limit
