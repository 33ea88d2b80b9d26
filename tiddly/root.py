"""GET /api/: the API root (SPEC §3.2) — where everything is, for people and programs alike."""

from __future__ import annotations

from urllib.parse import unquote

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
    ("filters", "filter-list", "Saved filters (tag expressions over content types)."),
    ("relationships", "relationship-list", "Links between items."),
    ("export", "export", "Export everything (Tiddly JSON, Markdown zip, bookmarks HTML)."),
    ("import", "import", "Import a Tiddly JSON, Netscape bookmarks or Markdown file."),
    ("skills_export", "prompt-export-skills", "Prompts exported as agent skills (zip)."),
    ("history_revert", "history-revert", "Revert every change made with one token."),
    ("search", "search", "Find items by keyword, by meaning or both (?q=&mode=hybrid)."),
    ("search_status", "search-status", "How far the meaning index has caught up (SPEC §16)."),
    ("tokens", "token-list", "Your API tokens (signed-in browser session only)."),
    ("bookmark_preview", "bookmark-preview", "A page's title and description: GET ?url= (§15)."),
    ("changes", "changes", "The change feed: what changed since a cursor (SPEC §17.1)."),
    ("webhooks", "webhook-list", "Webhooks: signed POSTs of your changes (SPEC §17.2)."),
]
# Per-item actions: written with an {id} placeholder.
TEMPLATES = [
    ("bookmark_capture", "bookmark-capture", "POST: capture a bookmark's page again (§15)."),
]
DOCS = [
    ("schema", "schema", "The OpenAPI 3 schema."),
    ("docs", "swagger-ui", "Swagger UI."),
    ("redoc", "redoc", "ReDoc."),
    ("admin", "admin:index", "The admin, for people."),
    (
        "capture",
        "capture",
        "Save a link from anywhere (signed-in people; the bookmarklet is offered there). "
        "Items are shared by POST /api/{type}/{id}/share/.",
    ),
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
    {
        **_links(RESOURCES),
        **{key: serializers.CharField(help_text=text) for key, _, text in TEMPLATES},
        **_links(DOCS),
        "mcp": McpLinksOut(help_text="The two MCP servers."),
    },
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
        for key, name, _ in TEMPLATES:
            # build_absolute_uri would quote the braces of the placeholder.
            base = request.build_absolute_uri("/").rstrip("/")
            body[key] = base + unquote(reverse(name, args=["{id}"]))
        body["mcp"] = {key: url(name) for key, name, _ in MCP}
        return Response(body)
