"""Mounts the two MCP servers: /mcp/content and /mcp/prompts (no trailing slash, like the SDK;
with one they answer the same)."""

from __future__ import annotations

from django.urls import path

from mcp_bridge.registry import content_server, prompt_server
from mcp_bridge.views import endpoint

content, prompts = endpoint(content_server), endpoint(prompt_server)

# The same servers with a trailing slash: a client configured with one gets JSON-RPC, not a 404
# (a redirect would not do: not every MCP client follows one on POST).
urlpatterns = [
    path("mcp/content", content, name="mcp-content"),
    path("mcp/prompts", prompts, name="mcp-prompts"),
    path("mcp/content/", content),
    path("mcp/prompts/", prompts),
]
