"""Tiddly: bookmarks, notes and prompts for people and their agents."""

# The one version string: the OpenAPI schema, the MCP servers and outbound User-Agents name it.
__version__ = "1.0.0"
