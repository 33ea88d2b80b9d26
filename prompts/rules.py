"""Normalisation and limits for a prompt's own fields: its name and its argument list."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from content.rules import SLUG_RE, check_length, invalid, limit

ARGUMENT_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def normalize_prompt_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise invalid("name", "Prompt name cannot be blank.")
    check_length("name", name)
    if not SLUG_RE.match(name):
        raise invalid(
            "name",
            f"Invalid prompt name '{name}'. Use lowercase letters, numbers and single hyphens, "
            "starting and ending with a letter or number (e.g. 'code-review').",
        )
    return name


def normalize_arguments(arguments: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the canonical list of ``{name, description, required}`` with unique names.

    The shape is checked too: file imports hand over raw JSON, not a serializer's output."""
    if not isinstance(arguments, list | tuple) or not all(isinstance(a, dict) for a in arguments):
        raise invalid(
            "arguments", "arguments must be a list of {name, description, required} objects."
        )
    result = [_normalize_argument(arg) for arg in arguments]
    if len(result) > limit("arguments_per_prompt"):
        raise invalid(
            "arguments", f"Too many arguments; the maximum is {limit('arguments_per_prompt')}."
        )
    names = [arg["name"] for arg in result]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise invalid(
            "arguments",
            f"Duplicate argument name(s): {', '.join(duplicates)}. Each argument needs a unique name.",
        )
    return result


def _normalize_argument(arg: dict[str, Any]) -> dict[str, Any]:
    name = str(arg.get("name", "")).strip()
    check_length("argument name", name, "argument_name")
    if not ARGUMENT_NAME_RE.match(name):
        raise invalid(
            "arguments",
            f"Invalid argument name '{name}'. Start with a lowercase letter, then lowercase "
            "letters, digits or underscores (e.g. 'code_snippet').",
        )
    description = arg.get("description")
    if description is not None and not isinstance(description, str):
        raise invalid("arguments", f"The description of argument '{name}' must be a string.")
    check_length("argument description", description, "argument_description")
    return {"name": name, "description": description, "required": bool(arg.get("required"))}
