"""JSON answers (SPEC §3.4) where Django itself would answer an API client with HTML.

- A write to an API path without its trailing slash (``POST /api/notes``): Django's
  ``APPEND_SLASH`` raises a RuntimeError under DEBUG (an HTML 500) and otherwise answers a 301,
  which clients follow with a GET, dropping the body. The API answers a JSON 404 naming the path
  with its slash instead; GET and HEAD are still redirected (nothing is lost).
- Too many query parameters (Django's ``DATA_UPLOAD_MAX_NUMBER_FIELDS``, e.g. 5 000 ``tags=``):
  Django raises ``TooManyFieldsSent`` when the view reads ``request.GET`` and renders its HTML 400
  page. The API answers a JSON 400 ``validation_error`` naming the parameter and the limit (DRF
  views through ``tiddly.errors.exception_handler``, any other view through this middleware).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import TooManyFieldsSent
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from django.middleware.common import CommonMiddleware

from tiddly.errors import too_many_fields_body

JSON_PREFIXES = ("/api/", "/mcp/")


def is_api_path(path: str) -> bool:
    return path.startswith(JSON_PREFIXES) or path in ("/api", "/mcp")


class JsonCommonMiddleware(CommonMiddleware):
    """Django's CommonMiddleware, except that API writes are not redirected to the slash URL."""

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> Any:
        if (
            response.status_code == 404
            and request.method not in ("GET", "HEAD")
            and is_api_path(request.path_info)
            and self.should_redirect_with_slash(request)
        ):
            with_slash = request.path + "/"
            return JsonResponse(
                {
                    "error": "not_found",
                    "message": (
                        f"No endpoint at {request.path}: API paths end with a slash. "
                        f"Send the same {request.method} to {with_slash}"
                    ),
                    "path": with_slash,
                },
                status=404,
            )
        return super().process_response(request, response)

    def process_exception(self, request: HttpRequest, exception: Exception) -> Any:
        if isinstance(exception, TooManyFieldsSent) and is_api_path(request.path_info):
            return JsonResponse(too_many_fields_body(request), status=400)
        return None
