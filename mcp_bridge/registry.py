"""The two MCP servers (SPEC §7), each with its tools and capabilities, built once at import.

``/mcp/content`` serves bookmarks and notes, ``/mcp/prompts`` prompt templates and the MCP
prompts capability; ``mcp_bridge/urls.py`` mounts them. Which tools each offers, in which order,
with which title and hints, is in each tool module's ``register``.
"""

from __future__ import annotations

from content.models import Bookmark, Note
from mcp_bridge import content_tools, instructions, prompt_capability, prompt_tools, resources
from mcp_bridge.resources import ResourceKind
from mcp_bridge.servers import TiddlyServer
from prompts.models import Prompt

content_server = TiddlyServer(
    name="tiddly-content",
    instructions=instructions.CONTENT,
    source="mcp-content",
    area="content",
    types=content_tools.TYPES,
    context_footer=content_tools.CONTEXT_FOOTER,
)
content_tools.register(content_server)
resources.register(content_server, [ResourceKind(Bookmark), ResourceKind(Note)])

prompt_server = TiddlyServer(
    name="tiddly-prompts",
    instructions=instructions.PROMPTS,
    source="mcp-prompts",
    area="prompts",
    types=prompt_tools.TYPES,
    context_footer=prompt_tools.CONTEXT_FOOTER,
)
prompt_tools.register(prompt_server)
prompt_capability.register(prompt_server)
resources.register(prompt_server, [ResourceKind(Prompt, by_name=True)])

SERVERS = (content_server, prompt_server)
