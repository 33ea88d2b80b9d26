"""Outbound edge cases (SPEC §15, round 4): non-ASCII URLs, the site-local and IETF ranges, name
resolution inside the deadline, and every resolved address tried in turn."""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tiddly import outbound
from tiddly.outbound import OutboundError, check_url, fetch, non_public_reason
from tiddly.tests.outbound_servers import LocalServer, allowed_server, local_server


@pytest.fixture
def server(settings: Any) -> Iterator[LocalServer]:
    with allowed_server(settings, timeout=3) as srv:
        yield srv


def _resolver(monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[str]]) -> list[str]:
    """Stub name resolution: ``answers`` maps a name to its addresses, in the resolver's order."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def fake(host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        if host not in answers:
            return real(host, port, *args, **kwargs)
        asked.append(host)
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (a, port, 0, 0))
            if ":" in a
            else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in answers[host]
        ]

    monkeypatch.setattr(outbound.socket, "getaddrinfo", fake)
    return asked


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("fec0::1", "a site-local address"),
        ("feff:ffff::1", "a site-local address"),
        ("192.0.0.9", "a reserved address (192.0.0.0/24, IETF protocol assignments)"),
        ("192.0.0.200", "a reserved address (192.0.0.0/24, IETF protocol assignments)"),
        ("::ffff:192.0.0.9", "a reserved address (192.0.0.0/24, IETF protocol assignments)"),
    ],
)
def test_site_local_and_ietf_protocol_ranges_are_refused(
    address: str, reason: str, settings: Any
) -> None:
    assert non_public_reason(ipaddress.ip_address(address)) == reason
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = []
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(OutboundError, match=r"^refused: "):
        check_url(f"http://{host}/")


def test_wire_url_encodes_host_path_and_query() -> None:
    assert outbound.wire_url("http://Bücher.example/café?q=ä b#top") == (
        "http://xn--bcher-kva.example/caf%C3%A9?q=%C3%A4%20b"
    )
    # Already encoded and plain ASCII URLs are left as they are.
    assert (
        outbound.wire_url("https://example.org/a%20b?x=1&y=%2F")
        == "https://example.org/a%20b?x=1&y=%2F"
    )
    assert outbound.wire_url("http://[::1]:8080/x") == "http://[::1]:8080/x"


def test_non_ascii_path_and_query_are_fetched(server: LocalServer) -> None:
    response = fetch(f"{server.url}/café?q=ä")
    assert response.status == 200
    assert server.seen[-1]["path"] == "/caf%C3%A9?q=%C3%A4"
    assert response.final_url == f"{server.url}/caf%C3%A9?q=%C3%A4"


def test_non_ascii_host_is_resolved_and_sent_in_idna(
    server: LocalServer, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = [f"bücher.test:{server.port}"]
    asked = _resolver(monkeypatch, {"xn--bcher-kva.test": ["127.0.0.1"]})
    response = fetch(f"http://bücher.test:{server.port}/wiki/Bücher")
    assert response.status == 200
    assert asked == ["xn--bcher-kva.test"]
    assert server.seen[-1]["host"] == f"xn--bcher-kva.test:{server.port}"
    assert server.seen[-1]["path"] == "/wiki/B%C3%BCcher"


def test_name_resolution_counts_inside_the_deadline(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.TIDDLY_OUTBOUND_TIMEOUT = 1
    real = socket.getaddrinfo

    def slow(host: str, *args: Any, **kwargs: Any) -> Any:
        if host != "slow-dns.test":
            return real(host, *args, **kwargs)
        time.sleep(4)  # a resolver that answers late, then with nothing
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(outbound.socket, "getaddrinfo", slow)
    with pytest.raises(OutboundError) as info:
        fetch("http://slow-dns.test/")
    assert str(info.value) == "timed out after 1 s (resolving slow-dns.test)"
    with pytest.raises(OutboundError, match=r"^timed out after 1 s \(resolving slow-dns.test\)"):
        check_url("http://slow-dns.test/")


def test_every_resolved_address_is_tried_in_turn(
    server: LocalServer, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An IPv6-first host on a machine where that address cannot be reached: the IPv4 one is
    tried next (here ::1 and 100::1 have no listener or no route; 127.0.0.1 answers)."""
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = [f"dual.test:{server.port}"]
    _resolver(monkeypatch, {"dual.test": ["::1", "100::1", "127.0.0.1"]})
    response = fetch(f"http://dual.test:{server.port}/page")
    assert response.status == 200
    assert server.seen[-1]["host"] == f"dual.test:{server.port}"


def test_when_no_address_answers_the_fetch_fails(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with local_server() as gone:
        port = gone.port
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = [f"dead.test:{port}"]
    _resolver(monkeypatch, {"dead.test": ["::1", "127.0.0.1"]})
    with pytest.raises(OutboundError, match=r"^connection failed:"):
        fetch(f"http://dead.test:{port}/page")
