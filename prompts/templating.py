"""Jinja2 prompt templates: validation (SPEC §5.1) and rendering (SPEC §5.2).

Pure functions on strings; no Django. Every template is parsed and rendered in a
sandboxed environment, built once at import time so validation stays cheap.

Messages are user-facing (they end up in 400 bodies and MCP ``isError`` results),
so ``str(exc)`` of both exception types is the complete message and never
contains a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template, meta
from jinja2.exceptions import SecurityError, TemplateError, TemplateSyntaxError, UndefinedError
from jinja2.sandbox import SandboxedEnvironment

from prompts.sandbox import BoundedSandbox, RenderLimitError, RenderLimits, render_bounded

__all__ = [
    "RenderError",
    "RenderLimitExceeded",
    "RenderLimits",
    "TemplateValidationError",
    "render_template",
    "validate_template",
]

BLANK_MESSAGE = "Template content is required and cannot be blank."
DISALLOWED_MESSAGE = "Template uses a disallowed operation."
TOO_DEEP_MESSAGE = "Template is nested too deeply."


class TemplateValidationError(ValueError):
    """The template is not acceptable as prompt content; ``str(exc)`` is the message."""


class RenderError(ValueError):
    """The template could not be rendered with these values; ``str(exc)`` is the message."""


class RenderLimitExceeded(RenderError):
    """Rendering was stopped by a bound of SPEC §5.2 (output size, value size, work)."""


def _make_environment() -> SandboxedEnvironment:
    # autoescape off: prompts are plain text for language models, not HTML.
    return BoundedSandbox(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)


_ENV = _make_environment()
_GLOBAL_NAMES = frozenset(_ENV.globals)

# Same parser without globals, so find_undeclared_variables reports *every* free name,
# including an argument that shadows a global such as `range` (it must count as used).
_ANALYSIS_ENV = _make_environment()
_ANALYSIS_ENV.globals.clear()


# --------------------------------------------------------------------------- validation


def validate_template(content: str | None, argument_names: Iterable[str]) -> None:
    """Raise :class:`TemplateValidationError` unless ``content`` is a valid template.

    Checks, in order: blank content; Jinja2 syntax (message names the line);
    free variables not declared as arguments; declared arguments never used.
    Names bound inside the template (``set``, ``for``, macro parameters) and the
    environment's globals (``range``, ``dict``, ``lipsum``, ``cycler``, ``joiner``,
    ``namespace``) are not free variables. When both undefined and unused names
    exist, both sentences are reported, undefined first, joined by one space.
    """
    if content is None or not content.strip():
        raise TemplateValidationError(BLANK_MESSAGE)
    free_names = _free_names(content)
    declared = set(argument_names)
    problems = [
        _names_message(
            "Template uses undefined variable(s): {}. "
            "Add them to arguments or remove them from the template.",
            free_names - declared - _GLOBAL_NAMES,
        ),
        _names_message(
            "Unused argument(s): {}. Remove them from arguments or use them in the template.",
            declared - free_names,
        ),
    ]
    message = " ".join(problem for problem in problems if problem)
    if message:
        raise TemplateValidationError(message)


def _free_names(content: str) -> set[str]:
    try:
        return set(meta.find_undeclared_variables(_ANALYSIS_ENV.parse(content)))
    except TemplateSyntaxError as exc:
        raise TemplateValidationError(_syntax_message(exc)) from None
    except RecursionError:
        raise TemplateValidationError(TOO_DEEP_MESSAGE) from None


def _syntax_message(exc: TemplateSyntaxError) -> str:
    # exc.message, not str(exc): the latter can carry a pseudo-traceback line.
    return f"Invalid Jinja2 syntax on line {exc.lineno}: {exc.message or 'syntax error'}"


def _names_message(template: str, names: set[str]) -> str:
    return template.format(_join(names)) if names else ""


def _join(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))


# --------------------------------------------------------------------------- rendering


def render_template(
    content: str | None,
    arguments: list[dict[str, Any]],
    values: Mapping[str, object],
    limits: RenderLimits | None = None,
) -> str:
    """Render ``content`` with ``values`` for the declared ``arguments``.

    ``arguments`` are ``{"name", "description", "required"}`` dicts (``required``
    defaults to false). Raises :class:`RenderError` for value keys that are not
    declared arguments, for required arguments absent from ``values`` (a JSON
    ``null`` counts as given), and for any failure while rendering. Optional
    arguments not given render as ``""``. Blank-or-None content renders ``""``.
    :class:`RenderLimitExceeded` (a ``RenderError``) when ``limits`` stop the render.
    """
    _check_values(arguments, values)
    if not content:
        return ""
    context = {argument["name"]: "" for argument in arguments} | dict(values)
    return _render(content, context, limits or RenderLimits())


def _check_values(arguments: list[dict[str, Any]], values: Mapping[str, object]) -> None:
    names = [argument["name"] for argument in arguments]
    unknown = set(values) - set(names)
    if unknown:
        valid = _join(names) or "none"
        raise RenderError(f"Unknown argument(s): {_join(unknown)}. Valid arguments: {valid}")
    missing = {a["name"] for a in arguments if a.get("required") and a["name"] not in values}
    if missing:
        raise RenderError(f"Missing required argument(s): {_join(missing)}")


@lru_cache(maxsize=128)
def _compile(content: str) -> Template:
    # Rendering the same prompt repeatedly (MCP prompts/get) should not recompile it;
    # compiled templates are immutable and safe to share between threads.
    return _ENV.from_string(content)


def _render(content: str, context: dict[str, object], limits: RenderLimits) -> str:
    try:
        return render_bounded(_compile(content), context, limits)
    except RenderLimitError as exc:
        raise RenderLimitExceeded(str(exc)) from None
    except MemoryError:  # a bound we did not foresee; still the caller's template, not a 500
        raise RenderLimitExceeded("The template needs more memory than a render may use.") from None
    except SecurityError:
        raise RenderError(DISALLOWED_MESSAGE) from None
    except TemplateSyntaxError as exc:
        raise RenderError(_syntax_message(exc)) from None
    except UndefinedError as exc:
        raise RenderError(f"Template variable error: {exc.message}") from None
    except TemplateError as exc:
        raise RenderError(f"Template error: {exc.message}") from None
    except RecursionError:
        raise RenderError(TOO_DEEP_MESSAGE) from None
    except Exception as exc:  # templates may raise anything; never leak a traceback
        raise RenderError(f"Template rendering failed: {type(exc).__name__}: {exc}") from None
