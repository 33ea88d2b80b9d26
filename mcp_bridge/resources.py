"""MCP resources on both servers (SPEC §17.3): items an MCP client can browse and attach.

Content: ``tiddly://bookmark/{id}`` and ``tiddly://note/{id}``, read as Markdown (a ``# title``
line, the URL for bookmarks, then the content). Prompts: ``tiddly://prompt/{name}``, read as the
raw template. ``resources/list`` pages through the caller's active items, most recently updated
first, 50 at a time. No subscriptions: the servers are stateless.

Every failure to find — an unknown, foreign, malformed, trashed or archived item, or one the
caller's scopes do not let it read — is the same JSON-RPC error ``-32002`` (resource not found),
so a URI reveals nothing about another person's items.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from asgiref.sync import sync_to_async
from mcp import types
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

from content.models import Item
from content.queries import resources
from content.shapes import item_markdown
from mcp_bridge import calls
from mcp_bridge.results import internal_error
from mcp_bridge.servers import TiddlyServer
from tiddly.errors import TiddlyError
from tiddly.scopes import scopes_of

RESOURCE_NOT_FOUND = -32002
MARKDOWN = "text/markdown"
URI = re.compile(r"^tiddly://(?P<kind>[a-z]+)/(?P<key>[^/?#]+)$")


class ResourceKind:
    """One type as resources: how its URI names an item and what a read returns."""

    def __init__(self, model: type[Item], *, by_name: bool = False) -> None:
        self.model = model
        self.by_name = by_name
        key = "name" if by_name else "id"
        self.template = f"tiddly://{model.type_name}/{{{key}}}"

    def uri(self, item: Item) -> str:
        key = getattr(item, "name") if self.by_name else item.pk  # noqa: B009
        return f"tiddly://{self.model.type_name}/{key}"

    def lookup(self, key: str) -> dict[str, Any] | None:
        if self.by_name:
            return {"name": key}
        try:
            return {"pk": uuid.UUID(key)}
        except ValueError:
            return None

    def text(self, item: Item) -> str:
        return (item.content or "") if self.by_name else item_markdown(item)


def not_found(uri: str) -> McpError:
    return McpError(
        types.ErrorData(
            code=RESOURCE_NOT_FOUND,
            message=f"Resource not found: {uri}. List resources (resources/list) for the URIs "
            "of your items, or check the id.",
            data={"uri": uri},
        )
    )


class Resources:
    """The handlers of one server, over its kinds."""

    def __init__(self, server: TiddlyServer, kinds: list[ResourceKind]) -> None:
        self.server = server
        self.kinds = {kind.model.type_name: kind for kind in kinds}

    def _readable(self) -> bool:
        return f"{self.server.area}:read" in scopes_of(calls.principal())

    def _listing(self, cursor: str | None) -> types.ListResourcesResult:
        if not self._readable():
            return types.ListResourcesResult(resources=[])
        by_name = any(kind.by_name for kind in self.kinds.values())
        models = [kind.model for kind in self.kinds.values()]
        try:
            page, next_cursor = resources.resource_page(calls.owner(), models, cursor, raw=by_name)
        except resources.BadCursor:
            raise McpError(
                types.ErrorData(
                    code=types.INVALID_PARAMS,
                    message="Invalid cursor: pass the nextCursor of a previous resources/list "
                    "result, or none for the first page.",
                )
            ) from None
        return types.ListResourcesResult(
            resources=[self._listed(entry) for entry in page], nextCursor=next_cursor
        )

    def _listed(self, entry: resources.Resource) -> types.Resource:
        kind = self.kinds[entry.item.type_name]
        item = entry.item
        name = getattr(item, "name") if kind.by_name else str(item.pk)  # noqa: B009
        return types.Resource(
            uri=AnyUrl(kind.uri(item)),
            name=name,
            title=item.title or None,
            description=item.description or None,
            mimeType=MARKDOWN,
            size=entry.size,
        )

    def _read(self, uri: str) -> list[ReadResourceContents]:
        match = URI.match(uri)
        kind = self.kinds.get(match["kind"]) if match else None
        lookup = kind.lookup(match["key"]) if kind and match else None
        if kind is None or lookup is None or not self._readable():
            raise not_found(uri)
        try:
            item = resources.active_item(calls.owner(), kind.model, **lookup)
        except TiddlyError:
            raise not_found(uri) from None
        return [ReadResourceContents(content=kind.text(item), mime_type=MARKDOWN)]

    # --- the handlers, registered on the low-level server ---

    async def list_resources(
        self, request: types.ListResourcesRequest
    ) -> types.ListResourcesResult:
        cursor = request.params.cursor if request.params else None
        return await _guarded(self._listing, cursor)

    async def list_templates(self) -> list[types.ResourceTemplate]:
        return [
            types.ResourceTemplate(
                uriTemplate=kind.template,
                name=f"{kind.model.type_name}",
                title=f"A {kind.model.type_name} of yours",
                description=(
                    "The prompt's raw Jinja2 template, by name."
                    if kind.by_name
                    else f"The {kind.model.type_name} as Markdown: a '# title' line"
                    + (", its URL" if "url" in kind.model.extra_fields else "")
                    + ", then its content."
                ),
                mimeType=MARKDOWN,
            )
            for kind in self.kinds.values()
        ]

    async def read_resource(self, uri: AnyUrl) -> Iterable[ReadResourceContents]:
        contents: list[ReadResourceContents] = await _guarded(self._read, str(uri))
        return contents


async def _guarded(fn: Any, *args: Any) -> Any:
    try:
        return await sync_to_async(fn)(*args)
    except McpError:
        raise
    except Exception:
        raise internal_error("resources") from None


def register(server: TiddlyServer, kinds: list[ResourceKind]) -> Resources:
    handlers = Resources(server, kinds)
    server.lowlevel.list_resources()(handlers.list_resources)
    server.lowlevel.list_resource_templates()(handlers.list_templates)
    server.lowlevel.read_resource()(handlers.read_resource)
    return handlers
