"""REST views for bookmarks, notes, the cross-type content list and tags.

Views are thin: validate the request with a serializer, call one service or query, shape the
response. All domain rules and errors live in the services.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.db import transaction
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
)
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from content import queries, services
from content.api import serializers as s
from content.api.history import HistoryActions, history_schemas
from content.history import Actor, clean_source
from content.models import Bookmark, Item, Note, Tag
from content.queries import line_window, list_params, parse_pk, within_item_search
from content.services import ItemRef
from tiddly.schema import errors

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


def validated(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def paginated(request: Request, total: int, items: list[dict[str, Any]], p: Any) -> Response:
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
    # Partial read is a GET feature. A write has already committed when its response is built,
    # so a line range there could only turn a saved change into a misleading 400.
    reading = request.method == "GET"
    query = validated(s.LineRangeQuerySerializer, request.query_params) if reading else {}
    window = line_window(item.content, query)
    response = Response(s.item_data(item, window=window), status=status_code)
    response["ETag"] = services.etag(item)
    return response


def str_replace_response(outcome: services.EditOutcome, include_item: bool) -> Response:
    body: dict[str, Any] = {
        "match_type": outcome.match_type,
        "line": outcome.line,
        "id": str(outcome.item.pk),
        "updated_at": s._dt(outcome.item.updated_at),
    }
    if include_item:
        body["item"] = s.item_data(outcome.item)
    response = Response(body)
    response["ETag"] = services.etag(outcome.item)
    return response


SEARCH_DESCRIPTION = (
    "Find literal text inside one item and get each match's line number and surrounding lines. "
    "Use it to: check how many times text occurs before an edit (str-replace needs exactly one); "
    "get the exact current text and context to build a unique `old_str`; locate text in a large "
    "item without reading all of it (then read just those lines with start_line/end_line). "
    "No match is a valid answer: 200 with an empty list."
)
STR_REPLACE_DESCRIPTION = (
    "Replace the one occurrence of `old_str` with `new_str`. Matching is progressive: exact, then "
    "ignoring trailing whitespace and CRLF, then allowing one uniform change of indentation "
    "(new_str is re-indented to match). Several matches → 400 multiple_matches listing them; none "
    "→ 400 no_match. A replacement that changes nothing writes nothing. Runs under a row lock: "
    "concurrent edits never overwrite each other."
)


def _item_schema(full: type, listed: type, create: type, update: type, label: str) -> Any:
    return extend_schema_view(
        list=extend_schema(
            summary=f"List {label}s",
            parameters=[s.ListQuerySerializer],
            responses={
                200: s.page_serializer(listed, f"Paginated{listed.__name__}"),
                **errors(400),
            },
        ),
        create=extend_schema(
            summary=f"Create a {label}",
            parameters=[SOURCE],
            request=create,
            responses={201: full, **errors(400, 409)},
        ),
        retrieve=extend_schema(
            summary=f"Get a {label} (optionally only some lines)",
            parameters=[s.LineRangeQuerySerializer],
            responses={200: full, **errors(400, 404)},
        ),
        partial_update=extend_schema(
            summary=f"Update a {label}",
            parameters=[IF_MATCH, SOURCE],
            request=update,
            responses={200: full, **errors(400, 404, 409, 412)},
        ),
        destroy=extend_schema(
            summary=f"Delete a {label} (trash, or permanently)",
            parameters=[
                OpenApiParameter(
                    "permanent", bool, description="Delete for good, with its history."
                ),
                IF_MATCH,
            ],
            responses={204: None, **errors(404, 412)},
        ),
        archive=extend_schema(
            summary=f"Archive a {label}", request=None, responses={200: full, **errors(404)}
        ),
        unarchive=extend_schema(
            summary=f"Unarchive a {label}", request=None, responses={200: full, **errors(400, 404)}
        ),
        restore=extend_schema(
            summary=f"Restore a {label} from the trash",
            request=None,
            responses={200: full, **errors(400, 404, 409)},
        ),
        track_usage=extend_schema(
            summary=f"Record that a {label} was used",
            request=None,
            responses={204: None, **errors(404)},
        ),
        search=extend_schema(
            summary=f"Search inside a {label}",
            description=SEARCH_DESCRIPTION,
            parameters=[s.WithinItemSearchQuerySerializer],
            responses={200: s.WithinItemSearchOut, **errors(400, 404)},
        ),
        str_replace=extend_schema(
            summary=f"Edit part of a {label}'s content (str-replace)",
            description=STR_REPLACE_DESCRIPTION,
            parameters=[s.StrReplaceQuerySerializer, IF_MATCH, SOURCE],
            request=s.PromptStrReplaceSerializer if label == "prompt" else s.StrReplaceSerializer,
            responses={200: s.StrReplaceOut, **errors(400, 404, 409, 412)},
        ),
        **history_schemas(full, label, [IF_MATCH, SOURCE]),
    )


class ItemViewSet(HistoryActions, viewsets.GenericViewSet):
    """CRUD, lifecycle and the agent editing actions for one item type."""

    scope_area = "content"  # tiddly.scopes.HasScope: content:read / content:write

    model: ClassVar[type[Item]]
    create_serializer: ClassVar[type[serializers.Serializer]]
    update_serializer: ClassVar[type[serializers.Serializer]]
    str_replace_serializer: ClassVar[type[serializers.Serializer]] = s.StrReplaceSerializer
    lookup_value_regex = "[^/]+"

    def get_queryset(self) -> Any:
        return queries.owned(self.request.user, self.model)

    def get_serializer_class(self) -> type[serializers.Serializer]:
        # Only the browsable API asks (for its raw-data form); without it text/html was a 500.
        return self.create_serializer if self.action == "list" else self.update_serializer

    def ref(self) -> ItemRef:
        return ItemRef(self.model, pk=parse_pk(self.kwargs["pk"], self.model))

    def load(self) -> Item:
        ref = self.ref()
        item = queries.get_item(self.request.user, self.model, ref.pk)
        if item is None:
            raise ref.not_found()
        return item

    def list(self, request: Request) -> Response:
        params = list_params(validated(s.ListQuerySerializer, request.query_params))
        total, items = queries.list_items(request.user, self.model, params)
        return paginated(request, total, [s.listed_item_data(i) for i in items], params)

    def create(self, request: Request) -> Response:
        data = validated(self.create_serializer, request.data)
        item = services.create_item(
            owner=request.user, model=self.model, data=data, actor=actor_for(request)
        )
        return item_response(item, request, status_code=status.HTTP_201_CREATED)

    def retrieve(self, request: Request, pk: str) -> Response:
        return item_response(self.load(), request)

    def partial_update(self, request: Request, pk: str) -> Response:
        data = validated(self.update_serializer, request.data)
        item = services.update_item(
            owner=request.user,
            ref=self.ref(),
            data=data,
            actor=actor_for(request),
            expected_updated_at=data.pop("expected_updated_at", None),
            if_match=request.headers.get("If-Match"),
        )
        return item_response(item, request)

    def destroy(self, request: Request, pk: str) -> Response:
        permanent = serializers.BooleanField().to_internal_value(
            request.query_params.get("permanent", "false")
        )
        if_match = request.headers.get("If-Match")
        if permanent:
            services.delete_item_permanently(owner=request.user, ref=self.ref(), if_match=if_match)
        else:
            services.trash_item(
                owner=request.user, ref=self.ref(), actor=actor_for(request), if_match=if_match
            )
        return Response(status=status.HTTP_204_NO_CONTENT)

    @action(detail=True, methods=["post"])
    def archive(self, request: Request, pk: str) -> Response:
        validated(s.NoBodySerializer, request.data)
        item = services.archive_item(owner=request.user, ref=self.ref(), actor=actor_for(request))
        return item_response(item, request)

    @action(detail=True, methods=["post"])
    def unarchive(self, request: Request, pk: str) -> Response:
        validated(s.NoBodySerializer, request.data)
        item = services.unarchive_item(owner=request.user, ref=self.ref(), actor=actor_for(request))
        return item_response(item, request)

    @action(detail=True, methods=["post"])
    def restore(self, request: Request, pk: str) -> Response:
        validated(s.NoBodySerializer, request.data)
        item = services.restore_item(owner=request.user, ref=self.ref(), actor=actor_for(request))
        return item_response(item, request)

    @action(detail=True, methods=["post"], url_path="track-usage")
    def track_usage(self, request: Request, pk: str) -> Response:
        validated(s.NoBodySerializer, request.data)
        services.track_usage(owner=request.user, ref=self.ref())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @action(detail=True, methods=["get"])
    def search(self, request: Request, pk: str) -> Response:
        query = validated(s.WithinItemSearchQuerySerializer, request.query_params)
        return Response(within_item_search(self.load(), query))

    @action(detail=True, methods=["patch"], url_path="str-replace")
    def str_replace(self, request: Request, pk: str) -> Response:
        return self.do_str_replace(request, self.ref())

    def do_str_replace(self, request: Request, ref: ItemRef) -> Response:
        query = validated(s.StrReplaceQuerySerializer, request.query_params)
        data = validated(self.str_replace_serializer, request.data)
        extra = {"arguments": data["arguments"]} if "arguments" in data else {}
        outcome = services.edit_content(
            owner=request.user,
            ref=ref,
            old_str=data["old_str"],
            new_str=data["new_str"],
            actor=actor_for(request),
            expected_updated_at=data.get("expected_updated_at"),
            if_match=request.headers.get("If-Match"),
            **extra,
        )
        return str_replace_response(outcome, query["include_updated_entity"])


@_item_schema(s.NoteOut, s.NoteListItem, s.NoteCreateSerializer, s.NoteUpdateSerializer, "note")
class NoteViewSet(ItemViewSet):
    model = Note
    create_serializer = s.NoteCreateSerializer
    update_serializer = s.NoteUpdateSerializer


@_item_schema(
    s.BookmarkOut,
    s.BookmarkListItem,
    s.BookmarkCreateSerializer,
    s.BookmarkUpdateSerializer,
    "bookmark",
)
class BookmarkViewSet(ItemViewSet):
    model = Bookmark
    create_serializer = s.BookmarkCreateSerializer
    update_serializer = s.BookmarkUpdateSerializer


class ContentViewSet(viewsets.GenericViewSet):
    """One list over bookmarks, notes and prompts."""

    @extend_schema(
        summary="List bookmarks, notes and prompts together",
        parameters=[s.ContentListQuerySerializer],
        responses={
            200: s.page_serializer(s.ContentListItem, "PaginatedContentList"),
            **errors(400),
        },
    )
    def list(self, request: Request) -> Response:
        data = validated(s.ContentListQuerySerializer, request.query_params)
        params = list_params(data)
        types = list(dict.fromkeys(data.get("type") or queries.MODELS))
        total, items = queries.list_content(request.user, types, params)
        return paginated(request, total, [s.listed_item_data(i) for i in items], params)


@extend_schema_view(
    list=extend_schema(
        summary="List your tags with counts of active items",
        parameters=[
            OpenApiParameter(
                "include_inactive", bool, description="Include tags with no active items."
            )
        ],
        responses={200: s.TagOut(many=True), **errors()},
    ),
    partial_update=extend_schema(
        summary="Rename a tag",
        request=s.TagRenameSerializer,
        responses={200: s.TagOut, **errors(400, 404, 409)},
    ),
    destroy=extend_schema(
        summary="Delete a tag (detaches it from all items)", responses={204: None, **errors(404)}
    ),
)
class TagViewSet(viewsets.GenericViewSet):
    serializer_class = s.TagRenameSerializer  # for the browsable API's form
    lookup_field = "name"
    lookup_value_regex = "[^/]+"

    def get_queryset(self) -> Any:
        return Tag.objects.filter(owner=self.request.user)

    def list(self, request: Request) -> Response:
        include = serializers.BooleanField().to_internal_value(
            request.query_params.get("include_inactive", "false")
        )
        return Response(queries.tag_counts(request.user, include_inactive=include))

    def partial_update(self, request: Request, name: str) -> Response:
        data = validated(s.TagRenameSerializer, request.data)
        with transaction.atomic():
            tag = services.rename_tag(owner=request.user, name=name, new_name=data["name"])
            counts = {
                t["name"]: t["count"]
                for t in queries.tag_counts(request.user, include_inactive=True)
            }
        return Response({"name": tag.name, "count": counts.get(tag.name, 0)})

    def destroy(self, request: Request, name: str) -> Response:
        services.delete_tag(owner=request.user, name=name)
        return Response(status=status.HTTP_204_NO_CONTENT)


__all__ = [
    "BookmarkViewSet",
    "ContentViewSet",
    "ItemViewSet",
    "NoteViewSet",
    "TagViewSet",
]
