"""The network backend of ``tiddly.outbound.fetch``: connects to the address that was checked
for a host (never a fresh lookup) and gives every socket read and write only the time left.

A module of its own so that httpcore (and whatever it loads: trio where installed) is imported
by the first outbound fetch, not by every web process at start-up."""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from typing import Any, Protocol

import httpcore


class Deadline(Protocol):
    def left(self, timeout: float | None) -> float: ...


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, self._deadline.left(timeout))
        return _Stream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class PinnedBackend(httpcore.NetworkBackend):
    """Connects a (host, port) to the address that was checked for it — never a fresh lookup."""

    def __init__(self, deadline: Deadline) -> None:
        self._inner = httpcore.SyncBackend()
        self._deadline = deadline
        self.pins: dict[tuple[str, int], tuple[str, ...]] = {}

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = self.pins.get((host.lower().strip("[]"), port))
        if not addresses:  # cannot happen: every hop is pinned before it is requested
            raise httpcore.ConnectError(f"{host}:{port} was not checked")
        failure: Exception | None = None
        for index, address in enumerate(addresses):
            # Each address but the last gets an equal share of the time left, so one that
            # drops packets cannot use up the attempt before the next is tried.
            left = self._deadline.left(timeout)
            share = left / (len(addresses) - index)
            try:
                stream = self._inner.connect_tcp(
                    address, port, share, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            return _Stream(stream, self._deadline)
        assert failure is not None
        raise failure

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)
