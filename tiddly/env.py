"""Small typed readers for settings that come from the environment.

Each one fails loudly on a malformed value instead of silently falling back, so a typo in a
deployment's environment stops the process at start-up rather than changing behaviour.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {value!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {number}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [part.strip() for part in value.split(",") if part.strip()]


def env_int_list(name: str, default: list[int]) -> list[int]:
    """Comma-separated non-negative integers (e.g. a retry schedule in seconds)."""
    try:
        numbers = [int(part) for part in env_list(name, [str(n) for n in default])]
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be comma-separated integers") from None
    if any(n < 0 for n in numbers):
        raise ImproperlyConfigured(f"{name} must not hold negative numbers, got {numbers}")
    return numbers
