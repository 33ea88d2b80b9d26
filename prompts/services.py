"""Prompt-specific services: rendering (validation lives on the model, writes in content)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from prompts.models import Prompt
from prompts.templating import RenderError, RenderLimitExceeded, RenderLimits, render_template
from tiddly import errors


def render_limits() -> RenderLimits:
    return RenderLimits(
        max_chars=settings.TIDDLY_RENDER_MAX_CHARS,
        max_steps=settings.TIDDLY_RENDER_MAX_STEPS,
        max_cpu_seconds=settings.TIDDLY_RENDER_MAX_CPU_MS / 1000,
    )


def render_prompt(*, prompt: Prompt, values: dict[str, Any]) -> str:
    """Render with the given argument values (SPEC §5.2).

    Errors are 400 ``invalid_template``, or ``render_limit_exceeded`` when the bounds stop it.
    """
    try:
        return render_template(prompt.content, prompt.arguments, values, render_limits())
    except RenderLimitExceeded as exc:
        raise errors.RenderLimitExceeded(str(exc)) from None
    except RenderError as exc:
        raise errors.InvalidTemplate(str(exc)) from None
