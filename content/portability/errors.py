"""The import's file-level error: ``400 invalid_import`` naming where the file went wrong."""

from __future__ import annotations

from typing import Any

from tiddly.errors import TiddlyError


class InvalidImport(TiddlyError):
    """The uploaded file cannot be imported at all; nothing was saved.

    ``position`` is ``{"line", "column"}`` (1-based) for text positions, or ``{"path"}`` (a
    JSONPath such as ``$.items``) for a structural problem of a Tiddly JSON file.
    """

    code = "invalid_import"

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        path: str | None = None,
    ) -> None:
        position: dict[str, Any] = {}
        if line is not None:
            position = {"line": line, "column": column or 1}
            message = f"{message} (line {line}, column {column or 1}). Nothing was imported."
        elif path is not None:
            position = {"path": path}
            message = f"{message} (at {path}). Nothing was imported."
        else:
            message = f"{message}. Nothing was imported."
        super().__init__(message, position=position)
