"""Output schemas as the tools publish them: lean draft-07, admitting the error object.

- Output schemas, made lean: the official SDK client validates every result against the tool's
  outputSchema with ``jsonschema.validate``, which first checks the schema itself against its
  metaschema — on every call. For an item-sized schema as pydantic writes it (2020-12 dialect,
  ``$defs``/``$ref``, ``anyOf`` for nullables, titles) that check costs an agent ~10 ms per call,
  more than the server's whole answer; the same constraints written as a plain draft-07 schema
  check in ~1 ms. The shapes are unchanged: same properties, types, nullability and required
  keys; only the spelling and the declared ``$schema`` differ (draft-07, which every JSON-Schema
  validator used by MCP clients supports).
- Output schemas that admit errors (SPEC §7 Interoperability): strict clients (the MCP Inspector)
  validate ``structuredContent`` against ``outputSchema`` on ``isError`` results too, so each
  schema is ``{"type": "object", "anyOf": [<success>, <the §3.4 error object>]}``; otherwise the
  agent sees a schema-validation failure instead of ``matches``, ``suggestion`` or
  ``server_state``.
"""

from __future__ import annotations

from typing import Any

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
_DROPPED_KEYWORDS = {"title", "$defs", "default"}


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The same constraints as a self-contained draft-07 schema (see the module docstring)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(child) for child in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return walk(defs[node["$ref"].rsplit("/", 1)[-1]])
        out = {k: walk(v) for k, v in node.items() if k not in _DROPPED_KEYWORDS}
        if isinstance(node.get("properties"), dict):  # property names are not keywords
            out["properties"] = {k: walk(v) for k, v in node["properties"].items()}
        return _nullable(out)

    return {"$schema": DRAFT_07, **walk(schema)}


# The §3.4 error object. Only ``error`` and ``message`` are typed: the other keys depend on the
# error (see tiddly.errors) and are described for the agent, not constrained.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "isError results: the same error object as the REST API (SPEC §3.4).",
    "required": ["error", "message"],
    "properties": {
        "error": {
            "type": "string",
            "description": "Stable code: validation_error, not_found, no_match, "
            "multiple_matches, conflict, forbidden, …",
        },
        "message": {"type": "string", "description": "What went wrong and how to fix the call."},
        "fields": {"description": "validation_error: the messages per argument."},
        "suggestion": {"description": "no_match / multiple_matches: what to try next."},
        "matches": {"description": "multiple_matches: every match with its line and context."},
        "server_state": {"description": "conflict: the item as it is now."},
        "existing_id": {"description": "url_conflict / name_conflict: the item holding it."},
    },
}


def admitting_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """A lean output schema that also admits the error object (see the module docstring)."""
    success = {k: v for k, v in schema.items() if k != "$schema"}
    return {"$schema": DRAFT_07, "type": "object", "anyOf": [success, ERROR_SCHEMA]}


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [{type: X, …}, {type: null}]`` -> ``{type: [X, "null"], …}``."""
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return node
    (other,) = [o for o in options if o != {"type": "null"}]
    if not isinstance(other.get("type"), str) or "anyOf" in other:
        return node
    merged = {k: v for k, v in node.items() if k != "anyOf"}
    merged.update(other)
    merged["type"] = [other["type"], "null"]
    return merged
