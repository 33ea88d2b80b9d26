"""Helpers for the OAuth tests: a live server, and a person who logs in and answers consent."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import uvicorn

from tiddly.asgi import application

REDIRECT = "http://127.0.0.1:8749/callback"


@contextmanager
def live_server() -> Iterator[str]:
    """The ASGI app on a port the system picks: parallel runs never collide on a fixed one."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="off", log_level="error")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return verifier, challenge.decode()


def hidden_fields(html: str) -> dict[str, str]:
    fields = {}
    for tag in re.findall(r"<input[^>]*>", html):
        name = re.search(r'name="([^"]*)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name and 'type="hidden"' in tag:
            fields[name.group(1)] = unescape(value.group(1)) if value else ""
    return fields


class Person:
    """A browser: logs in on the login page and answers the consent page."""

    def __init__(self, base: str, username: str, password: str) -> None:
        self.base = base
        self.username = username
        self.password = password
        self.http = httpx.Client(base_url=base, trust_env=False)

    def open_authorization(self, url: str) -> httpx.Response:
        """Follow the authorization URL (through the login page) to the consent page."""
        response = self.http.get(url)
        if response.status_code == 302 and "/oauth/login" in response.headers["Location"]:
            login = self.http.get(response.headers["Location"])
            fields = hidden_fields(login.text)
            fields.update(username=self.username, password=self.password)
            posted = self.http.post(str(login.url), data=fields)
            assert posted.status_code == 302, posted.text[:500]
            response = self.http.get(posted.headers["Location"])
        return response

    def answer(self, consent: httpx.Response, *, allow: bool) -> dict[str, list[str]]:
        """Post the consent form; return the query the client's redirect URI receives."""
        assert consent.status_code == 200, consent.text[:1000]
        fields = hidden_fields(consent.text)
        fields["allow" if allow else "deny"] = "Allow" if allow else "Deny"
        response = self.http.post(str(consent.url), data=fields)
        assert response.status_code == 302, response.text[:500]
        location = response.headers["Location"]
        assert location.startswith(REDIRECT), location
        return parse_qs(urlsplit(location).query)

    def authorize(self, url: str, *, allow: bool = True) -> dict[str, list[str]]:
        return self.answer(self.open_authorization(url), allow=allow)


def register(base: str, **metadata: Any) -> httpx.Response:
    body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", **metadata}
    return httpx.post(f"{base}/oauth/register", json=body, trust_env=False)
