"""The one way Tiddly talks to URLs that users supplied (SPEC §15 outbound safety).

Capture, preview and webhooks all go through `fetch`/`check_url`. The rules:
- only http/https;
- the host is resolved ONCE and every address must be public (`non_public_reason`); the connection
  then goes to the checked address (a pinning network backend for httpcore), so a DNS answer that
  changes between check and connect (DNS rebinding) cannot redirect us; TLS still verifies the
  certificate against the hostname (SNI = hostname);
- every redirect is checked again; at most 5 are followed;
- the body is read at most up to `max_bytes` AFTER decompression (we decompress ourselves with a
  bounded zlib object, so a gzip bomb never expands beyond the limit);
- one deadline covers connect, redirects and body: every socket read/write gets only the time left,
  so a server that trickles bytes is cut off;
- `TIDDLY_OUTBOUND_ALLOWED_HOSTS` names hosts (`host` or `host:port`, as written in the URL) that
  skip the public-address check (intranet hosts, tests against local servers);
- a URL goes out in its ASCII form (`wire_url`: IDNA host, percent-encoded path and query); the
  name is resolved in a thread inside the same deadline, and each checked address is tried in turn
  (an IPv6-first host still works from an IPv4-only machine).
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

import idna
from django.conf import settings

from tiddly import __version__

# Honest and plain: what is asking and which version, no made-up project URL.
USER_AGENT = f"Tiddly/{__version__}"
MAX_REDIRECTS = 5
_REDIRECT_STATUSES = {301, 302, 303, 307, 308}
_DEFAULT_PORTS = {"http": 80, "https": 443}
_CHUNK = 64 * 1024

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_IPV4_COMPAT = ipaddress.ip_network("::/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# Python's tables call these global: the deprecated IPv6 site-local range and IPv4's protocol
# assignments (only 192.0.0.0/29 and two /31s of it are "private" there).
_SITE_LOCAL = ipaddress.ip_network("fec0::/10")
_IETF_PROTOCOL = ipaddress.ip_network("192.0.0.0/24")
# What may stay as written in a path or query; everything else is percent-encoded as UTF-8
# ("%" stays, so an already encoded URL is not encoded twice).
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = _PATH_SAFE + "?"


class OutboundError(Exception):
    """A fetch that could not be done. `reason` starts with a fixed prefix (SPEC §15)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class OutboundResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    final_url: str
    content_type: str = ""  # media type only, lower case, no parameters
    charset: str | None = field(default=None)


# ---------------------------------------------------------------------------------------------
# Address classification


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped, compatible, NAT64, 6to4, Teredo), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _IPV4_COMPAT and int(ip) > 1:  # ::a.b.c.d (deprecated "compatible"), not :: or ::1
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def non_public_reason(ip: IPAddress) -> str | None:
    """Why `ip` must not be contacted (e.g. "a private address"), or None when it is public."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            # The packet really goes to the embedded IPv4 address: judge that one.
            return non_public_reason(inner)
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "a shared (CGNAT) address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_reserved:
        return "a reserved address"
    if isinstance(ip, ipaddress.IPv6Address) and ip in _SITE_LOCAL:
        return "a site-local address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _IETF_PROTOCOL:
        return "a reserved address (192.0.0.0/24, IETF protocol assignments)"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "not a public address"
    return None


# ---------------------------------------------------------------------------------------------
# URL checks


@dataclass(frozen=True)
class _Target:
    url: str
    scheme: str
    host: str  # as written, lower case, without brackets
    port: int
    addresses: tuple[str, ...]  # the checked addresses, tried in this order


def _ascii_host(host: str) -> str:
    """A host name as it goes into DNS: IDNA 2008 (UTS #46) for a non-ASCII name."""
    if host.isascii():
        return host
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise OutboundError(f"refused: {host!r} is not a valid host name ({exc})") from None


def wire_url(url: str) -> str:
    """`url` as it goes on the wire: the host in IDNA, path and query percent-encoded as UTF-8,
    no fragment. A URL that cannot be split is returned as it is (`_target` names the fault)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url
    host = parts.hostname or ""
    # An IPv6 literal keeps its brackets.
    netloc_host = f"[{host}]" if ":" in host else _ascii_host(host)
    netloc = netloc_host if port is None else f"{netloc_host}:{port}"
    if parts.username is not None:
        userinfo = quote(parts.username, safe="%!$&'()*+,;=-._~")
        if parts.password is not None:
            userinfo += ":" + quote(parts.password, safe="%!$&'()*+,;=-._~")
        netloc = f"{userinfo}@{netloc}"
    path = quote(parts.path, safe=_PATH_SAFE)
    query = quote(parts.query, safe=_QUERY_SAFE)
    return urlunsplit((parts.scheme, netloc, path, query, ""))


def _allowed_hosts() -> list[tuple[str, int | None]]:
    raw = getattr(settings, "TIDDLY_OUTBOUND_ALLOWED_HOSTS", []) or []
    if isinstance(raw, str):
        raw = raw.split(",")
    entries: list[tuple[str, int | None]] = []
    for entry in raw:
        entry = entry.strip().lower()
        if not entry:
            continue
        parts = urlsplit("//" + entry)
        try:
            port = parts.port
        except ValueError:
            port = None
        host = (parts.hostname or entry).strip("[]")
        try:
            host = _ascii_host(host)
        except OutboundError:
            continue  # an entry no URL can match
        entries.append((host, port))
    return entries


def _is_allowed(host: str, port: int) -> bool:
    return any(h == host and (p is None or p == port) for h, p in _allowed_hosts())


def _resolve(host: str, port: int, deadline: _Deadline) -> list[Any]:
    """`getaddrinfo` within the fetch's deadline: the lookup runs in a thread, so a resolver
    that never answers costs the time left, not the system's own timeout and retries."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:  # a literal needs no lookup (and no thread)
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    box: dict[str, Any] = {}

    def lookup() -> None:
        try:
            box["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=lookup, name="tiddly-resolve", daemon=True)
    thread.start()
    thread.join(max(deadline.end - time.monotonic(), 0.0))
    if thread.is_alive():
        raise OutboundError(
            f"timed out after {_format_seconds(deadline.seconds)} s (resolving {host})"
        )
    if "error" in box:
        raise box["error"]
    return list(box["infos"])


def _target(url: str, deadline: _Deadline) -> _Target:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise OutboundError(f"refused: {url!r} is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise OutboundError(
            f"refused: only http and https URLs can be fetched, not {scheme or 'a URL without a scheme'}"
        )
    host = (parts.hostname or "").lower()
    if not host:
        raise OutboundError("refused: the URL has no host")
    port = port if port is not None else _DEFAULT_PORTS[scheme]
    allowed = _is_allowed(host, port)
    if not allowed and getattr(settings, "TIDDLY_OUTBOUND_ONLY_ALLOWED", False):
        raise OutboundError(
            f"refused: {host} is not in TIDDLY_OUTBOUND_ALLOWED_HOSTS, and this server fetches "
            "only those (TIDDLY_OUTBOUND_ONLY_ALLOWED)"
        )
    try:
        infos = _resolve(host, port, deadline)
    except (socket.gaierror, UnicodeError) as exc:
        raise OutboundError(f"connection failed: cannot resolve {host} ({exc})") from None
    addresses: list[IPAddress] = []
    for info in infos:
        text = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone id
        addr = ipaddress.ip_address(text)
        if addr not in addresses:
            addresses.append(addr)
    if not addresses:
        raise OutboundError(f"connection failed: {host} has no address")
    if not allowed:
        for addr in addresses:
            reason = non_public_reason(addr)
            if reason is not None:
                shown = host if str(addr) == host else f"{host} ({addr})"
                raise OutboundError(
                    f"refused: {shown} is {reason}; only public addresses are fetched "
                    "(an administrator can allow a host with TIDDLY_OUTBOUND_ALLOWED_HOSTS)"
                )
    return _Target(
        url=url, scheme=scheme, host=host, port=port, addresses=tuple(str(a) for a in addresses)
    )


def check_url(url: str) -> None:
    """Raise OutboundError unless `url` could be fetched (scheme, host, resolution, public)."""
    _target(wire_url(url), _Deadline(_timeout_setting(15.0)))


# ---------------------------------------------------------------------------------------------
# One deadline for a whole fetch (the network backend is tiddly.pinned_network)


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self, timeout: float | None) -> float:
        remaining = self.end - time.monotonic()
        if remaining <= 0:
            import httpcore  # loaded by a fetch, not at start-up (tiddly.pinned_network)

            raise httpcore.TimeoutException("deadline")
        return remaining if timeout is None else min(timeout, remaining)


# ---------------------------------------------------------------------------------------------
# Body reading


class _Decoder:
    """Bounded decompression of gzip/deflate, so a bomb never expands beyond the limit."""

    def __init__(self, encoding: str) -> None:
        self._zlib: Any = None
        self._raw_deflate_fallback = encoding == "deflate"
        if encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS)
        elif encoding not in ("", "identity"):
            raise OutboundError(f"connection failed: unsupported content encoding {encoding}")

    def feed(self, data: bytes, room: int) -> Iterator[bytes]:
        """Decode `data` piece by piece, each piece at most `room + 1` bytes (one more tells the
        caller it is too large, and it stops pulling)."""
        if self._zlib is None:
            yield data
            return
        try:
            yield self._zlib.decompress(data, room + 1)
            # A bomb leaves input it has not expanded yet: expand it in bounded steps.
            while self._zlib.unconsumed_tail:
                yield self._zlib.decompress(self._zlib.unconsumed_tail, room + 1)
        except zlib.error:
            if self._raw_deflate_fallback:
                # Some servers send raw deflate without the zlib header.
                self._raw_deflate_fallback = False
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                yield from self.feed(data, room)
                return
            raise OutboundError("connection failed: the compressed body is corrupt") from None


def _read_body(stream: Iterable[bytes], encoding: str, max_bytes: int) -> bytes:
    decoder = _Decoder(encoding)
    parts: list[bytes] = []
    size = 0
    for chunk in stream:
        for out in decoder.feed(chunk, max_bytes - size):
            size += len(out)
            if size > max_bytes:
                raise OutboundError(f"too large: the response is over {max_bytes} bytes")
            parts.append(out)
    return b"".join(parts)


# ---------------------------------------------------------------------------------------------
# fetch


def _timeout_setting(timeout: float) -> float:
    # The default 15 s follows the setting, so tests can make a trickling server quick to cut off.
    if timeout == 15.0:
        return float(getattr(settings, "TIDDLY_OUTBOUND_TIMEOUT", 15))
    return timeout


def _format_seconds(seconds: float) -> str:
    return f"{seconds:g}"


def _media_type(value: str) -> tuple[str, str | None]:
    media, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset" and val.strip():
            charset = val.strip().strip('"').lower()
    return media.strip().lower(), charset


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process: building it loads the system's CA store (~30 ms of
    CPU), which per fetch was most of a webhook delivery's cost. Sharing it between threads and
    connections is safe; it is only read after this."""
    return ssl.create_default_context()


def fetch(
    url: str,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    follow_redirects: bool = True,
    max_bytes: int = 10_000_000,
    timeout: float = 15.0,
    read_body: bool = True,
) -> OutboundResponse:
    """Fetch `url` under the outbound rules; a non-2xx comes back as a response, not an error.
    ``read_body=False`` answers with the status and headers only: the body is never read (and
    the connection is closed), so its size cannot matter."""
    import httpcore  # loaded by the first fetch, not by every web process at start-up

    from tiddly.pinned_network import PinnedBackend

    seconds = _timeout_setting(timeout)
    deadline = _Deadline(seconds)
    backend = PinnedBackend(deadline)
    context = _tls_context()
    redirects = 0
    try:
        with httpcore.ConnectionPool(
            ssl_context=context, network_backend=backend, max_connections=2, retries=0
        ) as pool:
            while True:
                url = wire_url(url)
                target = _target(url, deadline)
                backend.pins[(target.host, target.port)] = target.addresses
                request_headers = {
                    "User-Agent": USER_AGENT,
                    "Accept": "*/*",
                    "Accept-Encoding": "gzip, deflate",
                }
                request_headers.update(headers or {})
                left = deadline.left(None)
                with pool.stream(
                    method,
                    url,
                    headers=list(request_headers.items()),
                    content=body,
                    extensions={
                        "timeout": {"connect": left, "read": left, "write": left, "pool": left}
                    },
                ) as response:
                    status = response.status
                    response_headers = {
                        k.decode("latin-1").lower(): v.decode("latin-1")
                        for k, v in response.headers
                    }
                    location = response_headers.get("location")
                    if follow_redirects and status in _REDIRECT_STATUSES and location:
                        redirects += 1
                        if redirects > MAX_REDIRECTS:
                            raise OutboundError(
                                f"too many redirects: more than {MAX_REDIRECTS} redirects "
                                f"(the last one went to {location})"
                            )
                        next_url = urljoin(url, location)
                        if status == 303 or (status in (301, 302) and method == "POST"):
                            method, body = "GET", None
                        if urlsplit(next_url).netloc != urlsplit(url).netloc:
                            headers = {
                                k: v
                                for k, v in (headers or {}).items()
                                if k.lower() not in ("authorization", "cookie")
                            }
                        url = next_url
                        continue
                    encoding = response_headers.get("content-encoding", "").strip().lower()
                    data = (
                        _read_body(response.iter_stream(), encoding, max_bytes)
                        if read_body
                        else b""
                    )
                    content_type, charset = _media_type(response_headers.get("content-type", ""))
                    return OutboundResponse(
                        status=status,
                        headers=response_headers,
                        body=data,
                        final_url=url,
                        content_type=content_type,
                        charset=charset,
                    )
    except httpcore.TimeoutException:
        raise OutboundError(f"timed out after {_format_seconds(seconds)} s") from None
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as exc:
        raise OutboundError(f"connection failed: {_describe(exc)}") from None
    except ssl.SSLError as exc:
        raise OutboundError(f"connection failed: TLS error ({exc})") from None
    except (TypeError, ValueError, UnicodeError) as exc:
        # The HTTP client's answer to a URL or header it cannot send: a failure of this fetch,
        # not of the caller.
        raise OutboundError(f"connection failed: {_describe(exc)}") from None


def _describe(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text[:300]
