"""Who is calling, for the tool in progress: the request the transport is answering.

The transport sets it per JSON-RPC request (``bind``); tools and handlers read it. A context
variable, so it follows the call through ``async_to_sync``/``sync_to_async`` into the worker
thread where the tool runs, and two concurrent requests never see each other's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from content.history import Actor
from content.queries import Owner
from tiddly.scopes import Area


class ServerFacts(Protocol):
    """What a call needs to know of the server answering it (``servers.TiddlyServer`` has it)."""

    @property
    def source(self) -> str: ...  # what history records for its changes
    @property
    def area(self) -> Area: ...  # content or prompts: the scopes its tools need
    @property
    def types(self) -> list[str]: ...  # the item types its search and overview cover
    @property
    def context_footer(self) -> str: ...


@dataclass(frozen=True)
class Call:
    server: ServerFacts
    request: Any  # the authenticated DRF request

    @property
    def principal(self) -> Any:
        """The API token (or OAuth grant) the request authenticated with."""
        return getattr(self.request, "auth", None)


_current: ContextVar[Call] = ContextVar("tiddly_mcp_call")


@contextmanager
def bind(server: ServerFacts, request: Any) -> Iterator[Call]:
    call = Call(server, request)
    token = _current.set(call)
    try:
        yield call
    finally:
        _current.reset(token)


def current() -> Call:
    return _current.get()


def owner() -> Owner:
    user = current().request.user
    assert isinstance(user, Owner)  # the MCP view requires authentication
    return user


def principal() -> Any:
    return current().principal


def actor() -> Actor:
    """Who history records for a change made by this call (SPEC §6)."""
    call = current()
    return Actor(
        source=call.server.source,
        token_prefix=getattr(call.principal, "token_prefix", None),
    )
