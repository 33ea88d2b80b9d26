"""REST views for prompts: the shared item API plus by-name access and rendering."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from content import queries, services
from content.api.common import IF_MATCH, SOURCE, actor_for, item_response, owner_of, precondition
from content.api.serializers import (
    LineRangeQuerySerializer,
    StrReplaceOut,
    StrReplaceQuerySerializer,
)
from content.api.views import STR_REPLACE_DESCRIPTION, ItemViewSet, item_schema
from content.queries import ItemRef
from prompts import skills
from prompts.api import serializers as s
from prompts.models import Prompt
from prompts.services import render_prompt
from tiddly.schema import downloads, errors
from tiddly.serializers import validated

NAME = OpenApiParameter("name", str, OpenApiParameter.PATH, description="The prompt's name.")


class SkillsQuery(serializers.Serializer):
    client = serializers.ChoiceField(
        choices=list(skills.CLIENTS),
        required=False,
        default="claude-code",
        help_text="claude-code and codex: a gzipped tar; claude-desktop: a zip.",
    )
    tags = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Only prompts with these tags."
    )
    tag_match = serializers.ChoiceField(choices=["all", "any"], required=False, default="all")


@item_schema(
    s.PromptOut,
    s.PromptListItem,
    s.PromptCreateSerializer,
    s.PromptUpdateSerializer,
    "prompt",
    str_replace=s.PromptStrReplaceSerializer,
)
class PromptViewSet(ItemViewSet):
    scope_area = "prompts"  # tiddly.scopes.HasScope
    model = Prompt
    create_serializer = s.PromptCreateSerializer
    update_serializer = s.PromptUpdateSerializer
    str_replace_serializer = s.PromptStrReplaceSerializer

    def named(self, name: str) -> ItemRef:
        return ItemRef(Prompt, name=name)

    @extend_schema(
        methods=["GET"],
        summary="Get an active prompt by name (optionally only some lines)",
        parameters=[NAME, LineRangeQuerySerializer],
        responses={200: s.PromptOut, **errors(400, 404)},
    )
    @extend_schema(
        methods=["PATCH"],
        summary="Update an active prompt by name (rename with `name`)",
        parameters=[NAME, IF_MATCH, SOURCE],
        request=s.PromptUpdateSerializer,
        responses={200: s.PromptOut, **errors(400, 404, 409, 412)},
    )
    @action(detail=False, methods=["get", "patch"], url_path=r"name/(?P<name>[^/]+)")
    def by_name(self, request: Request, name: str) -> Response:
        if request.method == "GET":
            return item_response(queries.get_owned(owner_of(request), self.named(name)), request)
        data = validated(self.update_serializer, request.data)
        checked = precondition(request, data.pop("expected_updated_at", None))
        prompt = services.update_item(
            owner=owner_of(request),
            ref=self.named(name),
            data=services.item_fields(data),
            actor=actor_for(request),
            precondition=checked,
        )
        return item_response(prompt, request)

    @extend_schema(
        summary="Edit part of an active prompt's template by name (str-replace)",
        description=STR_REPLACE_DESCRIPTION,
        parameters=[NAME, StrReplaceQuerySerializer, IF_MATCH, SOURCE],
        request=s.PromptStrReplaceSerializer,
        responses={200: StrReplaceOut, **errors(400, 404, 409, 412)},
    )
    @action(detail=False, methods=["patch"], url_path=r"name/(?P<name>[^/]+)/str-replace")
    def str_replace_by_name(self, request: Request, name: str) -> Response:
        return self.do_str_replace(request, self.named(name))

    @extend_schema(
        summary="Render a prompt with argument values",
        request=s.RenderSerializer,
        responses={200: s.RenderOut, **errors(400, 404)},
    )
    @action(detail=True, methods=["post"], scope_access="read")
    def render(self, request: Request, pk: str) -> Response:
        data = validated(s.RenderSerializer, request.data)
        prompt = self.load()
        assert isinstance(prompt, Prompt)
        return Response({"rendered": render_prompt(prompt=prompt, values=data["arguments"])})

    @extend_schema(
        summary="Export your active prompts as agent skills (an archive of <name>/SKILL.md)",
        description="One folder per active prompt with a SKILL.md: YAML front matter (name, "
        "description — the prompt's description, else its title), the template and a section on "
        "its arguments. Unknown client → 400.",
        parameters=[SkillsQuery],
        responses={
            **downloads(
                ("application/gzip", OpenApiTypes.BINARY, "claude-code, codex: tar.gz"),
                ("application/zip", OpenApiTypes.BINARY, "claude-desktop: zip"),
            ),
            **errors(400),
        },
    )
    @action(detail=False, methods=["get"], url_path="export/skills")
    def export_skills(self, request: Request) -> HttpResponse:
        query = dict(request.query_params.lists())
        if "client" in query and query["client"][-1] not in skills.CLIENTS:
            skills.client_for(query["client"][-1])  # 400 naming the valid clients
        data = validated(SkillsQuery, request.query_params)
        client, archive = skills.export(
            request.user,
            client=data["client"],
            tags=data.get("tags") or [],
            tag_match=data["tag_match"],
        )
        response = HttpResponse(archive, content_type=client.media_type)
        name = f"tiddly-skills-{client.name}.{client.extension}"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
