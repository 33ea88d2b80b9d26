"""An export as a streamed download, for the REST view and the admin action alike."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse

from content.portability.exporter import ExportFile


def download(request: HttpRequest, export: ExportFile) -> StreamingHttpResponse:
    """``export`` as an attachment, streamed chunk by chunk under WSGI and ASGI."""
    response = StreamingHttpResponse(_streamed(request, export.chunks))
    response["Content-Type"] = export.content_type
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    return response


def _streamed(
    request: HttpRequest, chunks: Iterator[bytes]
) -> Iterator[bytes] | AsyncIterator[bytes]:
    """Under ASGI, pull each chunk in the request's sync thread (where the database
    connection lives); Django would otherwise consume a sync iterator *whole* before sending."""
    if not isinstance(request, ASGIRequest):
        return chunks
    return _async_chunks(chunks)


def _next(chunks: Iterator[bytes]) -> bytes | None:
    return next(chunks, None)


async def _async_chunks(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    pull = sync_to_async(_next, thread_sensitive=True)
    while (chunk := await pull(chunks)) is not None:
        yield chunk
