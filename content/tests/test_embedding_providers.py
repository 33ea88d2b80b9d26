"""Embedding providers (SPEC §16): the OpenAI-compatible one against a local stand-in server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from content.search.embeddings import (
    LocalProvider,
    OffProvider,
    OpenAIProvider,
    ProviderUnavailable,
)


class StandIn:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail_first = 0
        self.status = 200
        self.connections: list[int] = []  # the client's port of each request


@pytest.fixture
def server() -> Iterator[tuple[str, StandIn]]:
    state = StandIn()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keeps connections open, as real endpoints do

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append({"body": body, "auth": self.headers.get("Authorization")})
            state.connections.append(self.client_address[1])
            if state.fail_first > 0:
                state.fail_first -= 1
                self._empty(503)
                return
            if state.status != 200:
                self._empty(state.status)
                return
            data = [
                {"index": i, "embedding": [float(len(text)), 1.0, 0.0]}
                for i, text in enumerate(body["input"])
            ]
            payload = json.dumps({"data": list(reversed(data)), "model": body["model"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _empty(self, status: int) -> None:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_openai_provider_batches_orders_and_normalises(server: tuple[str, StandIn]) -> None:
    url, state = server
    provider = OpenAIProvider(url=url, model="nomic-embed-text", api_key="sk-test", batch=2)
    vectors = provider.embed(["a", "bbb", "cc"])
    assert [r["body"]["input"] for r in state.requests] == [["a", "bbb"], ["cc"]]
    assert state.requests[0]["body"]["model"] == "nomic-embed-text"
    assert state.requests[0]["auth"] == "Bearer sk-test"
    assert vectors.shape == (3, 3)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    expected = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    np.testing.assert_allclose(vectors[0], expected, rtol=1e-6)  # order by "index", not by position


def test_openai_provider_keeps_its_connection_between_calls(server: tuple[str, StandIn]) -> None:
    """Each search embeds its query: a new connection (and TLS handshake) per call would cost
    every search a round trip or three."""
    url, state = server
    provider = OpenAIProvider(url=url, model="m", batch=2)
    for texts in (["a"], ["b", "c", "d"], ["e"]):
        assert provider.embed(texts).shape == (len(texts), 3)
    assert len(state.connections) == 4
    assert len(set(state.connections)) == 1


def test_openai_provider_retries_then_gives_up(server: tuple[str, StandIn]) -> None:
    url, state = server
    state.fail_first = 1
    provider = OpenAIProvider(url=url, model="m", retries=3, backoff=0.01)
    assert provider.embed(["x"]).shape == (1, 3)
    assert len(state.requests) == 2
    state.fail_first = 5
    with pytest.raises(ProviderUnavailable, match="HTTP 503"):
        provider.embed(["x"])


def test_openai_provider_client_error_and_no_server_are_unavailable(
    server: tuple[str, StandIn],
) -> None:
    url, state = server
    state.status = 401
    with pytest.raises(ProviderUnavailable, match="HTTP 401"):
        OpenAIProvider(url=url, model="m").embed(["x"])
    with pytest.raises(ProviderUnavailable, match="connection failed"):
        OpenAIProvider(url="http://127.0.0.1:9/v1", model="m", retries=1).embed(["x"])


def test_local_provider_loads_offline_and_normalises(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    provider = LocalProvider(tmp_path)
    vectors = provider.embed(["container orchestration", "sourdough bread"])
    assert vectors.shape == (2, 256)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert (tmp_path / "tokenizers" / "l2_supercat_tokenizer_config.json").exists()


def test_off_provider_is_unavailable() -> None:
    with pytest.raises(ProviderUnavailable, match="off"):
        OffProvider().embed(["x"])
