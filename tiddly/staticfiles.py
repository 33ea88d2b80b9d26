"""Static files with DEBUG off, collected or not.

Production serves compressed, cache-busted copies from ``STATIC_ROOT`` (``collectstatic``, which
``make run`` does). When that step was skipped, the admin used to answer 500 on every page (the
manifest storage cannot name a file it never hashed). Now it still works — unhashed URLs, files
served by WhiteNoise straight from the apps' static folders — and ``manage.py check`` (run by
``migrate``) warns with the command to run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Tags, register
from django.core.checks import Warning as CheckWarning
from whitenoise.middleware import WhiteNoiseMiddleware
from whitenoise.storage import CompressedManifestStaticFilesStorage

MANIFEST = "staticfiles.json"


def collected() -> bool:
    root = settings.STATIC_ROOT
    return bool(root) and (Path(root) / MANIFEST).is_file()


class StaticStorage(CompressedManifestStaticFilesStorage):
    """The manifest storage, falling back to plain names when nothing was collected."""

    def stored_name(self, name: str) -> str:
        if not self.hashed_files and not collected():
            return name
        return str(super().stored_name(name))


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise that also serves from the apps' folders when ``collectstatic`` was not run."""

    def __init__(self, get_response: Callable[..., Any] | None = None, **kwargs: Any) -> None:
        super().__init__(get_response, **kwargs)
        if not self.use_finders and not collected():
            self.add_files_from_finders()


@register(Tags.staticfiles)
def check_collected(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if settings.DEBUG or collected():
        return []
    return [
        CheckWarning(
            f"Static files were not collected into STATIC_ROOT ({settings.STATIC_ROOT}).",
            hint="Run `python manage.py collectstatic --noinput` (make run does). Until then the "
            "admin's CSS and JS are served from the app folders, without cache-busting names.",
            id="tiddly.W001",
        )
    ]
