"""``POST``/``DELETE /api/{type}/{id}/share/`` (SPEC §17.4), mixed into every item ViewSet.

A person's decision: REST and the admin only, no MCP tool. The write scope of the item's area.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from content.api.common import actor_for, owner_of
from content.models import Share
from content.queries import ItemRef
from content.services import sharing as services
from tiddly.schema import errors
from tiddly.serializers import StrictSerializer, off_unless, validated


class ShareRequestSerializer(StrictSerializer):
    rotate = off_unless(
        "true: replace the token with a new one; the old URL stops working at once."
    )


class ShareOut(serializers.Serializer):
    url = serializers.URLField(help_text="The public page: /s/<token> (append .md for Markdown).")
    created_at = serializers.DateTimeField(help_text="When this token was made (rotation renews).")


def share_body(share: Share) -> dict[str, Any]:
    return {"url": share.url, "created_at": share.created_at.isoformat().replace("+00:00", "Z")}


def request_origin(request: Request) -> str:
    return settings.TIDDLY_PUBLIC_URL or f"{request.scheme}://{request.get_host()}"


SHARE_DESCRIPTION = (
    "Make a public, read-only link to this item: anyone with the URL sees its title, description, "
    "URL (bookmarks), the content rendered from Markdown to sanitised HTML (prompts: the template "
    "and its arguments), or the raw Markdown at the URL plus `.md`. 201 with a new link, or 200 "
    'with the existing one (one link per item). `{"rotate": true}` replaces the token (201): '
    "the old URL stops working at once. Items in the trash cannot be shared (404), and a shared "
    "item moved to the trash is hidden until restored. DELETE removes the link (204)."
)


class ShareActions(viewsets.GenericViewSet):
    def ref(self) -> ItemRef:  # provided by ItemViewSet
        raise NotImplementedError

    @extend_schema(
        methods=["POST"],
        summary="Share the item by a public link (or rotate its token)",
        description=SHARE_DESCRIPTION,
        request=ShareRequestSerializer,
        responses={
            201: OpenApiResponse(ShareOut, description="A new link (first share or rotation)."),
            200: OpenApiResponse(ShareOut, description="The item's existing link."),
            **errors(400, 404),
        },
    )
    @extend_schema(
        methods=["DELETE"],
        summary="Stop sharing the item",
        description="Removes the public link; its URL answers 404 from now on. 204 also when the "
        "item was not shared.",
        request=None,
        responses={204: None, **errors(404)},
    )
    @action(detail=True, methods=["post", "delete"])
    def share(self, request: Request, pk: str) -> Response:
        if request.method == "DELETE":
            services.unshare_item(owner=owner_of(request), ref=self.ref(), actor=actor_for(request))
            return Response(status=status.HTTP_204_NO_CONTENT)
        rotate = validated(ShareRequestSerializer, request.data)["rotate"]
        outcome = services.share_item(
            owner=owner_of(request),
            ref=self.ref(),
            rotate=rotate,
            origin=request_origin(request),
            actor=actor_for(request),
        )
        code = status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK
        return Response(share_body(outcome.share), status=code)
