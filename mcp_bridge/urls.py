"""Mounts the two MCP servers: /mcp/content and /mcp/prompts (no trailing slash, like the SDK)."""

from __future__ import annotations

from django.urls import path

from mcp_bridge.registry import content_server, prompt_server
from mcp_bridge.views import endpoint

urlpatterns = [
    path("mcp/content", endpoint(content_server), name="mcp-content"),
    path("mcp/prompts", endpoint(prompt_server), name="mcp-prompts"),
]
