"""Imported by django-mcp-server's autodiscovery (``<app>/mcp.py``) before it registers toolsets."""

from __future__ import annotations

from mcp_bridge import content_tools, prompt_tools

__all__ = ["content_tools", "prompt_tools"]
