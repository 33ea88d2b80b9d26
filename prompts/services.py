"""Prompt-specific services: rendering (validation lives on the model, writes in content)."""

from __future__ import annotations

from typing import Any

from prompts.models import Prompt
from prompts.templating import RenderError, render_template
from tiddly.errors import InvalidTemplate


def render_prompt(*, prompt: Prompt, values: dict[str, Any]) -> str:
    """Render with the given argument values (SPEC §5.2); errors are 400 invalid_template."""
    try:
        return render_template(prompt.content, prompt.arguments, values)
    except RenderError as exc:
        raise InvalidTemplate(str(exc)) from None
