"""The two MCP servers (SPEC §7), each with its tools and capabilities, built once at import.

``/mcp/content`` serves bookmarks and notes, ``/mcp/prompts`` prompt templates and the MCP
prompts capability; ``mcp_bridge/urls.py`` mounts them. Which tools each offers, in which order,
with which title and hints, is in each tool module's ``register``.
"""

from __future__ import annotations

from types import ModuleType

from content.models import Bookmark, Note
from mcp_bridge import content_tools, instructions, prompt_capability, prompt_tools, resources
from mcp_bridge.resources import ResourceKind
from mcp_bridge.servers import TiddlyServer
from prompts.models import Prompt
from tiddly.scopes import Area


def _server(area: Area, help_text: str, tools: ModuleType) -> TiddlyServer:
    """A server named after its area (``tiddly-<area>``, history source ``mcp-<area>``) with the
    tools its module registers."""
    server = TiddlyServer(
        name=f"tiddly-{area}",
        instructions=help_text,
        source=f"mcp-{area}",
        area=area,
        types=tools.TYPES,
        context_footer=tools.CONTEXT_FOOTER,
    )
    tools.register(server)
    return server


content_server = _server("content", instructions.CONTENT, content_tools)
resources.register(content_server, [ResourceKind(Bookmark), ResourceKind(Note)])

prompt_server = _server("prompts", instructions.PROMPTS, prompt_tools)
prompt_capability.register(prompt_server)
resources.register(prompt_server, [ResourceKind(Prompt, by_name=True)])

SERVERS = (content_server, prompt_server)
