"""GET /api/: the API root (SPEC §3.2) — where everything is, for people and programs alike."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tiddly.schema import errors

# (key, URL name, what a reader finds there): the order of the answer.
RESOURCES = [
    ("bookmarks", "bookmark-list", "Bookmarks."),
    ("notes", "note-list", "Notes."),
    ("prompts", "prompt-list", "Prompt templates."),
    ("content", "content-list", "One list over bookmarks, notes and prompts."),
    ("tags", "tag-list", "Your tags with counts."),
    ("search", "search", "Find items by keyword, by meaning or both (?q=&mode=hybrid)."),
    ("tokens", "token-list", "Your API tokens (signed-in browser session only)."),
]
DOCS = [
    ("schema", "schema", "The OpenAPI 3 schema."),
    ("docs", "swagger-ui", "Swagger UI."),
    ("redoc", "redoc", "ReDoc."),
    ("admin", "admin:index", "The admin, for people."),
]
MCP = [
    ("content", "mcp-content", "MCP Content server (bookmarks and notes), streamable HTTP."),
    ("prompts", "mcp-prompts", "MCP Prompt server (prompt templates), streamable HTTP."),
]


def _links(entries: list[tuple[str, str, str]]) -> dict[str, serializers.Field]:
    return {key: serializers.URLField(help_text=text) for key, _, text in entries}


McpLinksOut = type("McpLinksOut", (serializers.Serializer,), _links(MCP))
ApiRootOut = type(
    "ApiRootOut",
    (serializers.Serializer,),
    {**_links(RESOURCES), **_links(DOCS), "mcp": McpLinksOut(help_text="The two MCP servers.")},
)


class ApiRootView(APIView):
    """Answers with or without credentials: it only says where things are."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        summary="API root: links to every resource, the docs, the schema and the MCP servers",
        responses={200: ApiRootOut, **errors(scoped=False)},
        auth=[],
        tags=["root"],
    )
    def get(self, request: Request) -> Response:
        def url(name: str) -> str:
            return request.build_absolute_uri(reverse(name))

        body: dict[str, object] = {key: url(name) for key, name, _ in RESOURCES + DOCS}
        body["mcp"] = {key: url(name) for key, name, _ in MCP}
        return Response(body)
