"""Mounts the two MCP servers: /mcp/content and /mcp/prompts (no trailing slash, like the SDK)."""

from __future__ import annotations

from django.urls import path

from mcp_bridge.servers import content_server, prompt_server
from mcp_bridge.views import McpView

urlpatterns = [
    path("mcp/content", McpView.as_view(mcp_server=content_server), name="mcp-content"),
    path("mcp/prompts", McpView.as_view(mcp_server=prompt_server), name="mcp-prompts"),
]
