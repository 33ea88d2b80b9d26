"""REST views for bookmarks, notes, the cross-type content list and tags.

Views are thin: validate the request with a serializer, call one service or query, shape the
response. All domain rules and errors live in the services.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.db import transaction
from drf_spectacular.utils import (
    extend_schema,
    extend_schema_view,
)
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from content import item_types, queries, services, shapes
from content.api import serializers as s
from content.api.capture import BookmarkCaptureActions
from content.api.common import (
    IF_MATCH,
    SOURCE,
    actor_for,
    item_response,
    owner_of,
    paginated,
    precondition,
    str_replace_response,
)
from content.api.history import HistoryActions, history_schemas
from content.api.meaning import MeaningActions
from content.api.sharing import ShareActions
from content.models import Bookmark, Item, Note, Tag
from content.queries import ItemRef
from content.text.replace import Edit
from tiddly.schema import errors
from tiddly.scopes import ANY_AREA, AREAS, readable_areas, require_scopes
from tiddly.serializers import validated

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
    "concurrent edits never overwrite each other.\n\n"
    "`replace_all: true` replaces every match instead (the answer adds `replacements`). `edits` "
    "(1-100 `{old_str, new_str, replace_all?}`) applies several edits as one change: each is "
    "matched against the ORIGINAL content, matches must not overlap (400 overlapping_edits with "
    "`edit_indexes` and `lines`), a failing edit fails the request with its error plus "
    "`edit_index`, and one history version is recorded; the answer has `edits: [{match_type, "
    "line, replacements}]`. `dry_run: true` makes every check (matching, templates, limits, "
    "expected_updated_at/If-Match) and writes nothing: the answer adds `dry_run: true`, `diff` "
    "(unified, 3 context lines, at most 20 000 characters) and `diff_truncated`."
)


def item_schema(
    full: type,
    listed: type,
    create: type,
    update: type,
    label: str,
    str_replace: type = s.StrReplaceSerializer,
) -> Any:
    """The OpenAPI of one item type's ViewSet (every type has the same actions)."""
    return extend_schema_view(
        list=extend_schema(
            summary=f"List {label}s",
            parameters=[s.ListQuerySerializer],
            responses={
                200: s.page_serializer(listed, f"Paginated{listed.__name__}"),
                **errors(400, 404),
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
            parameters=[s.DeleteQuerySerializer, IF_MATCH],
            responses={204: None, **errors(400, 404, 412)},
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
            request=str_replace,
            responses={200: s.StrReplaceOut, **errors(400, 404, 409, 412)},
        ),
        **history_schemas(full, label, [IF_MATCH, SOURCE]),
    )


class ItemViewSet(ShareActions, MeaningActions, HistoryActions):
    """CRUD, lifecycle and the agent editing actions for one item type."""

    scope_area: str = "content"  # tiddly.scopes.HasScope: content:read / content:write
    # Set per action (``@action(scope_access="read")``) where a POST only reads: recording use.
    scope_access: str | None = None

    model: ClassVar[type[Item]]
    create_serializer: ClassVar[type[serializers.Serializer]]
    update_serializer: ClassVar[type[serializers.Serializer]]
    str_replace_serializer: ClassVar[type[serializers.Serializer]] = s.StrReplaceSerializer
    lookup_value_regex = "[^/]+"

    def get_queryset(self) -> Any:
        return queries.owned(owner_of(self.request), self.model)

    def get_serializer_class(self) -> type[serializers.Serializer]:
        # Only the browsable API asks (for its raw-data form); without it text/html was a 500.
        return self.create_serializer if self.action == "list" else self.update_serializer

    def ref(self) -> ItemRef:
        return ItemRef.by_id(self.model, self.kwargs["pk"])

    def load(self) -> Item:
        return queries.get_owned(owner_of(self.request), self.ref())

    def list(self, request: Request) -> Response:
        query = validated(s.ListQuerySerializer, request.query_params)
        params = queries.list_params(owner_of(request), query)
        total, items = queries.list_items(owner_of(request), self.model, params)
        listed = [shapes.listed_item_data(i) for i in items]
        return paginated(request, total, listed, params)

    def create(self, request: Request) -> Response:
        data = dict(validated(self.create_serializer, request.data))
        # A bookmark's capture wishes (SPEC §15); what they cause is the item service's call.
        options = services.CreateOptions(
            capture=data.pop("capture", None), page_html=data.pop("page_html", None)
        )
        item = services.create_item(
            owner=owner_of(request),
            model=self.model,
            data=services.item_fields(data),
            actor=actor_for(request),
            options=options,
        )
        return item_response(item, request, status_code=status.HTTP_201_CREATED)

    def retrieve(self, request: Request, pk: str) -> Response:
        return item_response(self.load(), request)

    def partial_update(self, request: Request, pk: str) -> Response:
        data = validated(self.update_serializer, request.data)
        checked = precondition(request, data.pop("expected_updated_at", None))
        item = services.update_item(
            owner=owner_of(request),
            ref=self.ref(),
            data=services.item_fields(data),
            actor=actor_for(request),
            precondition=checked,
        )
        return item_response(item, request)

    def destroy(self, request: Request, pk: str) -> Response:
        permanent = validated(s.DeleteQuerySerializer, request.query_params)["permanent"]
        ref, actor, checked = self.ref(), actor_for(request), precondition(request)
        if permanent:
            services.delete_item_permanently(
                owner=owner_of(request), ref=ref, actor=actor, precondition=checked
            )
        else:
            services.trash_item(owner=owner_of(request), ref=ref, actor=actor, precondition=checked)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @action(detail=True, methods=["post"])
    def archive(self, request: Request, pk: str) -> Response:
        return self.change_state(request, services.archive_item)

    @action(detail=True, methods=["post"])
    def unarchive(self, request: Request, pk: str) -> Response:
        return self.change_state(request, services.unarchive_item)

    @action(detail=True, methods=["post"])
    def restore(self, request: Request, pk: str) -> Response:
        return self.change_state(request, services.restore_item)

    def change_state(self, request: Request, service: Callable[..., Item]) -> Response:
        """The body of every bodiless state change: one service call, the item back."""
        validated(s.NoBodySerializer, request.data)
        item = service(owner=owner_of(request), ref=self.ref(), actor=actor_for(request))
        return item_response(item, request)

    @action(detail=True, methods=["post"], url_path="track-usage", scope_access="read")
    def track_usage(self, request: Request, pk: str) -> Response:
        validated(s.NoBodySerializer, request.data)
        services.track_usage(owner=owner_of(request), ref=self.ref())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @action(detail=True, methods=["get"])
    def search(self, request: Request, pk: str) -> Response:
        query = validated(s.WithinItemSearchQuerySerializer, request.query_params)
        return Response(queries.within_item_search(self.load(), **query))

    @action(detail=True, methods=["patch"], url_path="str-replace")
    def str_replace(self, request: Request, pk: str) -> Response:
        return self.do_str_replace(request, self.ref())

    def do_str_replace(self, request: Request, ref: ItemRef) -> Response:
        query = validated(s.StrReplaceQuerySerializer, request.query_params)
        data = validated(self.str_replace_serializer, request.data)
        edits = data.pop("edits", None)
        expected = data.pop("expected_updated_at", None)
        outcome = services.edit_content(
            owner=owner_of(request),
            ref=ref,
            old_str=data.pop("old_str", None),
            new_str=data.pop("new_str", None),
            replace_all=data.pop("replace_all"),
            edits=None if edits is None else [Edit(**edit) for edit in edits],
            dry_run=data.pop("dry_run"),
            actor=actor_for(request),
            # Type fields changed with the edit (a prompt's arguments); null there means "keep".
            also=services.item_fields({k: v for k, v in data.items() if v is not None}) or None,
            precondition=precondition(request, expected),
        )
        return str_replace_response(outcome, query["include_updated_entity"])


@item_schema(s.NoteOut, s.NoteListItem, s.NoteCreateSerializer, s.NoteUpdateSerializer, "note")
class NoteViewSet(ItemViewSet):
    model = Note
    create_serializer = s.NoteCreateSerializer
    update_serializer = s.NoteUpdateSerializer


@item_schema(
    s.BookmarkOut,
    s.BookmarkListItem,
    s.BookmarkCreateSerializer,
    s.BookmarkUpdateSerializer,
    "bookmark",
)
class BookmarkViewSet(BookmarkCaptureActions, ItemViewSet):
    model = Bookmark
    create_serializer = s.BookmarkCreateSerializer
    update_serializer = s.BookmarkUpdateSerializer


class ContentViewSet(viewsets.GenericViewSet):
    """One list over bookmarks, notes and prompts: those of the areas the caller may read."""

    scope_area = ANY_AREA

    @extend_schema(
        summary="List bookmarks, notes and prompts together",
        parameters=[s.ContentListQuerySerializer],
        responses={
            200: s.page_serializer(s.ContentListItem, "PaginatedContentList"),
            **errors(400, 404),
        },
    )
    def list(self, request: Request) -> Response:
        data = validated(s.ContentListQuerySerializer, request.query_params)
        params = queries.list_params(owner_of(request), data)
        readable = item_types.types_in(readable_areas(request.auth))
        types = list(dict.fromkeys(data.get("type") or readable))
        require_scopes(request.auth, scopes_to_read(types))
        total, items = queries.list_content(owner_of(request), types, params)
        listed = [shapes.listed_item_data(i) for i in items]
        return paginated(request, total, listed, params)


@extend_schema_view(
    list=extend_schema(
        summary="List your tags with counts of active items",
        parameters=[s.TagListQuerySerializer],
        responses={200: s.TagOut(many=True), **errors(400)},
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
    """Tags are shared by every area: counts cover the areas the caller may read, and renaming
    or deleting a tag needs the write scope of every area whose items carry it (it changes
    them all)."""

    scope_area = ANY_AREA
    serializer_class = s.TagRenameSerializer  # for the browsable API's form
    lookup_field = "name"
    lookup_value_regex = "[^/]+"

    def get_queryset(self) -> Any:
        return Tag.objects.filter(owner=owner_of(self.request))

    def list(self, request: Request) -> Response:
        include = validated(s.TagListQuerySerializer, request.query_params)["include_inactive"]
        return Response(_tag_counts(request, include_inactive=include))

    def partial_update(self, request: Request, name: str) -> Response:
        with transaction.atomic():
            _require_tag_write(request, name)
            data = validated(s.TagRenameSerializer, request.data)
            tag = services.rename_tag(owner=owner_of(request), name=name, new_name=data["name"])
            counts = {t["name"]: t["count"] for t in _tag_counts(request, include_inactive=True)}
        return Response({"name": tag.name, "count": counts.get(tag.name, 0)})

    def destroy(self, request: Request, name: str) -> Response:
        with transaction.atomic():
            _require_tag_write(request, name)
            services.delete_tag(owner=owner_of(request), name=name)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _tag_counts(request: Request, *, include_inactive: bool) -> list[shapes.TagCount]:
    types = item_types.types_in(readable_areas(request.auth))
    return queries.tag_counts(owner_of(request), include_inactive=include_inactive, types=types)


def _require_tag_write(request: Request, name: str) -> None:
    used_by = queries.tag_types(owner_of(request), name)
    areas = {item_types.model_for(t).scope_area for t in used_by}
    require_scopes(request.auth, [f"{area}:write" for area in AREAS if area in areas])


def scopes_to_read(types: list[str]) -> list[str]:
    areas = {item_types.model_for(t).scope_area for t in types}
    return [f"{area}:read" for area in AREAS if area in areas]


__all__ = [
    "BookmarkViewSet",
    "ContentViewSet",
    "ItemViewSet",
    "NoteViewSet",
    "TagViewSet",
]
