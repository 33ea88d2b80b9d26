from __future__ import annotations

from django.apps import AppConfig


class McpBridgeConfig(AppConfig):
    name = "mcp_bridge"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Runs after mcp_server's ready() (INSTALLED_APPS order), which has registered the
        # toolsets of mcp_bridge/mcp.py on the two servers.
        from mcp_bridge import prompt_capability, registry

        registry.finish()
        prompt_capability.register()
