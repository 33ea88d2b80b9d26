"""The behaviour hints every tool declares (SPEC §7: readOnlyHint, destructiveHint,
idempotentHint). ``readOnlyHint`` also decides the scope a tool needs (``TiddlyServer.scope_for``)
and which throttle budget a call counts against."""

from __future__ import annotations

from mcp.types import ToolAnnotations

READ = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
CREATE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
# Overwrites part of the content: repeating it may apply twice (or fail with no_match).
EDIT = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False
)
# Overwrites fields with the given values (an update, a restore): repeating it changes nothing
# more.
UPDATE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
)
# Idempotent: linking linked items returns the existing link.
LINK = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
