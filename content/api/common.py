"""What every item endpoint shares: who is acting, preconditions, pages and item responses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from content import queries, services, shapes
from content.api import serializers as s
from content.history import Actor, clean_source
from content.models import Item
from content.queries import Owner
from content.services import Precondition
from tiddly.serializers import validated

IF_MATCH = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    description="ETag from a GET; 412 with server_state if the item changed since.",
)
SOURCE = OpenApiParameter(
    "X-Request-Source",
    str,
    OpenApiParameter.HEADER,
    description="Free-form client name recorded in history (default 'api').",
)


def actor_for(request: Request, default: str = "api") -> Actor:
    return Actor(
        source=clean_source(request.headers.get("X-Request-Source"), default),
        token_prefix=getattr(request.auth, "token_prefix", None),
    )


def owner_of(request: Request) -> Owner:
    """The signed-in user (every item endpoint requires authentication)."""
    assert isinstance(request.user, Owner)
    return request.user


def precondition(request: Request, expected_updated_at: Any = None) -> Precondition:
    return Precondition.from_if_match(request.headers.get("If-Match"), expected_updated_at)


def paginated(request: Request, total: int, items: Sequence[Mapping[str, Any]], p: Any) -> Response:
    url = request.build_absolute_uri()
    next_url = None
    if p.offset + p.limit < total:
        next_url = replace_query_param(url, "offset", p.offset + p.limit)
    previous = None
    if p.offset > 0:
        previous = (
            remove_query_param(url, "offset")
            if p.offset - p.limit <= 0
            else replace_query_param(url, "offset", p.offset - p.limit)
        )
    return Response({"count": total, "next": next_url, "previous": previous, "results": items})


def item_response(item: Item, request: Request, *, status_code: int = 200) -> Response:
    """The item; a GET (the item's page) also carries its ``relationships``."""
    # Partial read is a GET feature. A write has already committed when its response is built,
    # so a line range there could only turn a saved change into a misleading 400.
    reading = request.method == "GET"
    query = validated(s.LineRangeQuerySerializer, request.query_params) if reading else {}
    window = queries.line_window(item.content, query.get("start_line"), query.get("end_line"))
    body: shapes.ItemData
    if reading:
        body = queries.item_detail(owner_of(request), item, window)
    else:
        body = shapes.item_data(item, window=window)
    response = Response(body, status=status_code)
    response["ETag"] = shapes.etag(item)
    return response


def str_replace_response(outcome: services.EditOutcome, include_item: bool) -> Response:
    body: shapes.ItemEditResult = {**shapes.edit_data(outcome)}
    if include_item:
        body["item"] = shapes.item_data(outcome.item)
    response = Response(body)
    response["ETag"] = shapes.etag(outcome.item)
    return response
