"""Outbound safety (SPEC §15) against real local servers, plus the address classification."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tiddly import outbound
from tiddly.outbound import OutboundError, check_url, fetch, non_public_reason
from tiddly.tests.outbound_servers import PAGE, LocalServer, allowed_server, local_server


@pytest.fixture
def server(settings: Any) -> Iterator[LocalServer]:
    # room for a 20 MB read on a busy machine
    with allowed_server(settings, timeout=3) as srv:
        yield srv


# --- address classification -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.255.0.9", "a loopback address"),
        ("10.0.0.1", "a private address"),
        ("172.16.5.4", "a private address"),
        ("192.168.1.1", "a private address"),
        ("169.254.169.254", "a link-local address"),
        ("100.64.0.1", "a shared (CGNAT) address"),
        ("100.127.255.254", "a shared (CGNAT) address"),
        ("224.0.0.1", "a multicast address"),
        ("239.255.255.250", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("0.0.0.0", "an unspecified address"),
        ("255.255.255.255", "a reserved address"),
        ("192.0.2.1", "a private address"),  # TEST-NET-1 (documentation)
        ("::", "an unspecified address"),
        ("::1", "a loopback address"),
        ("fc00::1", "a private address"),
        ("fd12:3456::1", "a private address"),
        ("fe80::1", "a link-local address"),
        ("ff02::1", "a multicast address"),
        ("::ffff:10.0.0.1", "a private address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("::ffff:169.254.169.254", "a link-local address"),
        ("::10.0.0.1", "a private address"),  # IPv4-compatible form
        ("::127.0.0.1", "a loopback address"),
        ("64:ff9b::10.0.0.1", "a private address"),  # NAT64
        ("2002:0a00:0001::1", "a private address"),  # 6to4 of 10.0.0.1
        ("2001:db8::1", "a private address"),  # documentation range
    ],
)
def test_non_public_addresses_are_named(address: str, reason: str) -> None:
    assert non_public_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    "address", ["93.184.216.34", "1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]
)
def test_public_addresses_pass(address: str) -> None:
    assert non_public_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://127.0.0.1/", "refused: 127.0.0.1 is a loopback address"),
        ("http://[::1]/", "refused: ::1 is a loopback address"),
        ("http://[::ffff:127.0.0.1]/", "is a loopback address"),
        ("http://169.254.169.254/latest/meta-data/", "refused: 169.254.169.254 is a link-local"),
        ("http://10.0.0.5/", "refused: 10.0.0.5 is a private address"),
        ("http://100.64.0.1/", "CGNAT"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://[::]/", "unspecified"),
        ("http://2130706433/", "loopback"),  # 127.0.0.1 written as one number
        ("http://localhost:8000/", "refused: localhost (127.0.0.1) is a loopback address"),
        ("ftp://example.org/", "refused: only http and https"),
        ("file:///etc/passwd", "refused: only http and https"),
        ("javascript:alert(1)", "refused: only http and https"),
        ("http:///nohost", "refused: the URL has no host"),
        ("http://example.org:99999/", "refused:"),
    ],
)
def test_check_url_refuses(url: str, fragment: str, settings: Any) -> None:
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = []
    with pytest.raises(OutboundError) as info:
        check_url(url)
    assert fragment in str(info.value)


def test_unresolvable_host_is_a_connection_failure(settings: Any) -> None:
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = []
    with pytest.raises(OutboundError) as info:
        check_url("http://no-such-host.invalid/")
    assert str(info.value).startswith("connection failed: cannot resolve no-such-host.invalid")


def test_every_resolved_address_must_be_public(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = []

    def fake(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", port)),
        ]

    monkeypatch.setattr(outbound.socket, "getaddrinfo", fake)
    with pytest.raises(OutboundError) as info:
        check_url("https://mixed.example/")
    assert "refused: mixed.example (10.1.2.3) is a private address" in str(info.value)


# --- allowed hosts --------------------------------------------------------------------------


def test_local_server_is_refused_unless_allowed(settings: Any) -> None:
    with local_server() as srv:
        settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = []
        with pytest.raises(OutboundError) as info:
            fetch(srv.url + "/page")
        assert str(info.value).startswith("refused: 127.0.0.1 is a loopback address")
        assert srv.seen == []  # nothing was sent

        settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]  # any port
        assert fetch(srv.url + "/page").status == 200


def test_allowed_host_with_port_names_only_that_port(settings: Any) -> None:
    with local_server() as first, local_server() as second:
        settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = [f"127.0.0.1:{first.port}"]
        assert fetch(first.url + "/page").status == 200
        with pytest.raises(OutboundError, match=r"^refused: 127.0.0.1 is a loopback"):
            fetch(second.url + "/page")
        # A redirect from the allowed port to another port is checked again and refused.
        first.httpd.other_url = second.url
        with pytest.raises(OutboundError, match=r"^refused: 127.0.0.1 is a loopback"):
            fetch(first.url + "/to-other-port")
        assert second.seen == []


def test_allowed_host_is_matched_as_written_not_by_address(settings: Any) -> None:
    with local_server() as srv:
        settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = [f"127.0.0.1:{srv.port}"]
        # localhost resolves to the same address, but it is not the host that was allowed.
        with pytest.raises(OutboundError, match=r"^refused: localhost"):
            fetch(f"http://localhost:{srv.port}/page")


# --- fetch against real local servers -------------------------------------------------------


def test_fetch_page(server: LocalServer) -> None:
    response = fetch(server.url + "/page")
    assert response.status == 200
    assert response.body == PAGE.encode()
    assert response.content_type == "text/html"
    assert response.charset == "utf-8"
    assert response.final_url == server.url + "/page"
    assert "Tiddly" in server.seen[-1]["user-agent"]
    assert server.seen[-1]["host"] == f"127.0.0.1:{server.port}"


def test_gzip_body_is_decompressed(server: LocalServer) -> None:
    assert fetch(server.url + "/gzip-small").body == PAGE.encode()


def test_redirect_to_a_private_address_is_refused(server: LocalServer) -> None:
    with pytest.raises(OutboundError) as info:
        fetch(server.url + "/to-private")
    assert str(info.value).startswith("refused: 10.0.0.5 is a private address")


def test_redirect_to_cloud_metadata_is_refused(server: LocalServer) -> None:
    with pytest.raises(OutboundError, match=r"^refused: 169.254.169.254 is a link-local address"):
        fetch(server.url + "/to-metadata")


def test_five_redirects_are_followed(server: LocalServer) -> None:
    response = fetch(server.url + "/hop/5")
    assert response.status == 200
    assert response.final_url == server.url + "/hop/0"


def test_seven_hop_chain_is_too_many_redirects(server: LocalServer) -> None:
    with pytest.raises(OutboundError) as info:
        fetch(server.url + "/hop/7")
    assert str(info.value).startswith("too many redirects")
    # The 6th redirect is not followed: /hop/7 .. /hop/2 were requested, 6 requests in all.
    assert [seen["path"] for seen in server.seen] == [f"/hop/{n}" for n in range(7, 1, -1)]


def test_redirects_can_be_left_unfollowed(server: LocalServer) -> None:
    response = fetch(server.url + "/hop/3", follow_redirects=False)
    assert response.status == 302
    assert response.headers["location"] == "/hop/2"


def test_gzip_bomb_is_cut_off(server: LocalServer) -> None:
    with pytest.raises(OutboundError) as info:
        fetch(server.url + "/bomb")
    assert str(info.value).startswith("too large")


def test_twenty_megabyte_page_is_too_large(server: LocalServer) -> None:
    with pytest.raises(OutboundError, match=r"^too large: the response is over 10000000 bytes"):
        fetch(server.url + "/big")


def test_smaller_limit_is_honoured(server: LocalServer) -> None:
    with pytest.raises(OutboundError, match=r"^too large"):
        fetch(server.url + "/page", max_bytes=10)


def test_trickling_body_is_cut_off(server: LocalServer) -> None:
    with pytest.raises(OutboundError) as info:
        fetch(server.url + "/trickle")
    assert str(info.value) == "timed out after 3 s"


def test_trickling_headers_are_cut_off(server: LocalServer) -> None:
    with pytest.raises(OutboundError, match=r"^timed out after 3 s"):
        fetch(server.url + "/trickle-headers")


def test_explicit_timeout_argument(server: LocalServer) -> None:
    with pytest.raises(OutboundError, match=r"^timed out after 0.5 s"):
        fetch(server.url + "/trickle", timeout=0.5)


def test_tls_context_is_built_once_per_process(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the CA store costs ~30 ms of CPU: a webhook worker must not pay it per delivery."""
    built: list[object] = []
    real = outbound.ssl.create_default_context

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(outbound.ssl, "create_default_context", counting)
    for _ in range(3):
        assert fetch(server.url + "/page").status == 200
    assert len(built) <= 1  # none when an earlier fetch in this process built it


def test_non_2xx_is_a_response_not_an_error(server: LocalServer) -> None:
    assert fetch(server.url + "/status/404").status == 404
    assert fetch(server.url + "/status/429").status == 429


def test_503_that_recovers(server: LocalServer) -> None:
    first = fetch(server.url + "/flaky")
    assert first.status == 503
    second = fetch(server.url + "/flaky")
    assert second.status == 200
    assert second.body == PAGE.encode()


def test_post_with_body_and_headers(server: LocalServer) -> None:
    response = fetch(
        server.url + "/hook",
        method="POST",
        headers={"Content-Type": "application/json", "X-Signature": "abc"},
        body=b'{"a": 1}',
    )
    assert response.status == 200
    assert response.body == b'{"a": 1}'
    assert server.seen[-1]["x-signature"] == "abc"


def test_connection_refused_is_a_connection_failure(settings: Any) -> None:
    with local_server() as srv:
        port = srv.port
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = [f"127.0.0.1:{port}"]
    with pytest.raises(OutboundError, match=r"^connection failed:"):
        fetch(f"http://127.0.0.1:{port}/page")


def test_connects_to_the_checked_address_without_a_second_lookup(
    server: LocalServer, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the name is resolved once; the socket goes to that address."""
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = [f"rebind.test:{server.port}"]
    answers = iter(["127.0.0.1", "10.9.9.9"])  # a second lookup would get the other answer
    calls: list[str] = []
    real = socket.getaddrinfo

    def fake(host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.test":
            calls.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(outbound.socket, "getaddrinfo", fake)
    response = fetch(f"http://rebind.test:{server.port}/page")
    assert response.status == 200
    assert calls == ["rebind.test"]
    assert server.seen[-1]["host"] == f"rebind.test:{server.port}"


def test_only_allowed_hosts_refuses_every_other_host_before_any_lookup(
    settings: Any, monkeypatch: Any
) -> None:
    settings.TIDDLY_OUTBOUND_ONLY_ALLOWED = True
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = []
    looked_up: list[str] = []
    monkeypatch.setattr("socket.getaddrinfo", lambda host, *a, **k: looked_up.append(host) or [])
    with pytest.raises(OutboundError, match=r"^refused: 93.184.215.14 is not in"):
        check_url("http://93.184.215.14/")
    assert looked_up == []
