"""ASGI entry point: REST API, admin and both MCP servers in one process."""

from __future__ import annotations

import os
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.base import BaseHandler
from django.http import FileResponse, HttpRequest, HttpResponseBase

from tiddly.memory import tune_malloc, web_threshold
from tiddly.sqlite import base as sqlite_base
from tiddly.sqlite.imports import leave_out_postgres

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tiddly.settings")


class TiddlyASGIHandler(ASGIHandler):
    """Django's ASGI handler, with the middleware chain and view run in one thread hop.

    Every view here is synchronous (DRF, admin, the MCP views). Django's async chain calls each
    sync middleware's process_request/process_response through its own ``sync_to_async`` hop —
    about a dozen thread round-trips per request. Loading the chain in sync mode and entering it
    once keeps everything else (body reading, disconnect handling, streaming, signals) as Django
    does it.
    """

    def __init__(self) -> None:
        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        await super().__call__(scope, receive, send)

    async def lifespan(self, receive: Any, send: Any) -> None:
        """The server's start and stop (uvicorn sends them): the embedded task worker (a child
        process) lives between the two (SPEC §15; ``TIDDLY_EMBEDDED_WORKER=0`` leaves it to
        worker processes)."""
        from tiddly.workers import embedded_worker

        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                embedded_worker.start()
                await sync_to_async(embedded_worker.wait_ready, thread_sensitive=False)(
                    settings.TIDDLY_WORKER_READY_SECONDS
                )
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await sync_to_async(embedded_worker.stop, thread_sensitive=False)()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def run_get_response(self, request: HttpRequest) -> HttpResponseBase:
        response = await sync_to_async(self.get_response, thread_sensitive=True)(request)
        response._handler_class = self.__class__  # type: ignore[attr-defined]
        if isinstance(response, FileResponse):
            response.block_size = self.chunk_size
        return response


def get_application() -> Any:
    import django

    django.setup(set_prefix=False)
    return TiddlyASGIHandler()


def freeze_startup_objects() -> None:
    """Load the URLconf (and with it every view, serializer and MCP server), then move all
    objects that exist now out of the cyclic collector's reach: a full collection then costs
    only what requests created, so ``tiddly.middleware`` can afford one after large payloads.
    """
    import gc

    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018  (imports every view module)
    gc.collect()
    gc.freeze()


_engine = str(settings.DATABASES["default"]["ENGINE"])
tune_malloc(threshold=web_threshold(_engine))
if "sqlite" in _engine:
    leave_out_postgres()
sqlite_base.web_process()
application = get_application()
freeze_startup_objects()
