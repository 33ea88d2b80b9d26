"""The error contract (SPEC §3.4): domain exceptions and the one DRF exception handler.

Services raise ``TiddlyError`` subclasses; REST turns them into ``{error, message, …}`` bodies here
and the MCP bridge turns the very same ``body()`` into ``isError`` tool results. Every message tells
the caller — often an LLM — how to fix the request.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import Http404, HttpRequest
from rest_framework import exceptions as drf
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class TiddlyError(Exception):
    status_code: int = status.HTTP_400_BAD_REQUEST
    code = "error"

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, **self.extra}

    def rpc_message(self) -> str:
        """The message of a JSON-RPC error (MCP prompts/get) carrying this error as its data."""
        return self.message


class ValidationFailed(TiddlyError):
    code = "validation_error"

    def __init__(self, fields: dict[str, list[str]], message: str | None = None) -> None:
        if message is None:
            parts = [f"{name}: {' '.join(msgs)}" for name, msgs in fields.items()]
            message = "Invalid request. Fix these fields and retry. " + "; ".join(parts)
        super().__init__(message, fields=fields)


class InvalidTemplate(TiddlyError):
    code = "invalid_template"


class RenderLimitExceeded(TiddlyError):
    """A prompt render was stopped by the bounds of SPEC §5.2 (output size or work)."""

    code = "render_limit_exceeded"

    def rpc_message(self) -> str:
        # JSON-RPC errors carry no machine code of ours in `code`; SPEC §5.2 puts it up front.
        return f"{self.code}: {self.message}"


class Forbidden(TiddlyError):
    """The caller is authenticated but may not do this (e.g. a token without the scope)."""

    status_code = status.HTTP_403_FORBIDDEN
    code = "forbidden"


class NotFound(TiddlyError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"


def _validation_fields(detail: Any) -> dict[str, list[str]]:
    if isinstance(detail, dict):
        return {str(k): _flatten(v) for k, v in detail.items()}
    return {"non_field_errors": _flatten(detail)}


def _flatten(detail: Any) -> list[str]:
    if isinstance(detail, list):
        out: list[str] = []
        for i, entry in enumerate(detail):
            if isinstance(entry, dict):
                out.extend(f"[{i}].{k}: {m}" for k, v in entry.items() for m in _flatten(v))
            else:
                out.extend(_flatten(entry))
        return out
    if isinstance(detail, dict):
        return [f"{k}: {m}" for k, v in detail.items() for m in _flatten(v)]
    return [str(detail)]


def _drf_body(exc: drf.APIException) -> dict[str, Any]:
    if isinstance(exc, drf.ValidationError):
        return ValidationFailed(_validation_fields(exc.detail)).body()
    if isinstance(exc, drf.ParseError):
        return {
            "error": "validation_error",
            "message": f"{exc.detail} Send a valid JSON object with Content-Type: application/json.",
            "fields": {},
        }
    if isinstance(exc, drf.NotAuthenticated):
        return {
            "error": "not_authenticated",
            "message": "Authentication required: send 'Authorization: Bearer <API token>'. "
            "Get a token at /account/tokens/ (signed in), in the admin, or with "
            "`manage.py create_token <username>`.",
        }
    if isinstance(exc, drf.AuthenticationFailed):
        return {"error": "invalid_token", "message": str(exc.detail)}
    if isinstance(exc, drf.PermissionDenied):
        return {"error": "forbidden", "message": str(exc.detail)}
    if isinstance(exc, drf.NotFound):
        return {
            "error": "not_found",
            "message": "Not found. Check the id or name; it may belong to no item you own.",
        }
    if isinstance(exc, drf.Throttled):
        wait = getattr(exc, "wait", None) or 1
        return {
            "error": "throttled",
            "message": f"Too many requests. Retry in {int(wait + 0.999)} seconds.",
        }
    if isinstance(exc, drf.MethodNotAllowed):
        return {"error": "method_not_allowed", "message": str(exc.detail)}
    if isinstance(exc, drf.UnsupportedMediaType):
        return {
            "error": "unsupported_media_type",
            "message": f"{exc.detail} Send JSON with Content-Type: application/json.",
        }
    if isinstance(exc, drf.NotAcceptable):
        return {"error": "not_acceptable", "message": str(exc.detail)}
    return {"error": exc.default_code, "message": str(exc.detail)}


def too_many_fields_body(request: HttpRequest) -> dict[str, Any]:
    """The 400 for more query (or form) parameters than DATA_UPLOAD_MAX_NUMBER_FIELDS allows,
    naming the most repeated parameter — usually one list filter sent thousands of times."""
    limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
    counts: dict[str, int] = {}
    for pair in request.META.get("QUERY_STRING", "").split("&"):
        if pair:
            name = pair.split("=", 1)[0][:100]
            counts[name] = counts.get(name, 0) + 1
    total = sum(counts.values())
    name = max(counts, key=counts.__getitem__) if counts else "body"
    message = (
        f"Too many parameters: {total} (at most {limit} in one request). "
        f"Send fewer values of {name!r} ({counts.get(name, 0)} sent)."
        if counts
        else f"Too many fields (at most {limit} in one request)."
    )
    return ValidationFailed({name: [message]}, message=message).body()


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, TiddlyError):
        return Response(exc.body(), status=exc.status_code)
    if isinstance(exc, TooManyFieldsSent):
        return Response(too_many_fields_body(context["request"]), status=400)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            {
                "error": "field_limit_exceeded",
                "message": "The request body is larger than this server accepts. Send less data.",
                "field": "body",
            },
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    response = drf_exception_handler(exc, context)
    if response is None or not isinstance(exc, drf.APIException):
        return response
    response.data = _drf_body(exc)
    return response
