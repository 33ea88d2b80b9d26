"""Results end where relevance ends (SPEC §16, round 4), and a hung provider costs a search at
most one short try."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from content.search import ranking
from content.search.embeddings import LocalProvider
from content.tests.helpers import assert_error
from content.tests.search_corpus import NOTES, QUERIES
from content.tests.search_support import _fresh_index, index, make_note, search  # noqa: F401

pytestmark = pytest.mark.django_db

NONSENSE = ["qwzx vrrbl tnakp", "flurbo quanzix", "zorp blat wibble", "xyzzy plugh grault"]


@pytest.fixture
def corpus(api: Any) -> dict[str, str]:
    ids = {key: make_note(api, title, content) for key, (title, content) in NOTES.items()}
    index()
    return ids


def test_nonsense_finds_nothing_and_count_counts_what_is_left(
    api: Any, corpus: dict[str, str]
) -> None:
    assert ranking.relevance_floor(LocalProvider.model) > 0
    empty = 0
    for q in NONSENSE:
        for mode in ("semantic", "hybrid"):
            body = search(api, q, mode=mode)
            assert body["count"] == len(body["results"]) <= 1, (q, mode, body)
            empty += not body["results"]
    assert empty >= 6  # few or none: most nonsense queries find nothing at all
    # A paraphrase still finds its note, and only items above the floor are counted.
    query, target = QUERIES[0]
    body = search(api, query, mode="semantic")
    assert body["results"][0]["id"] == corpus[target]
    assert 0 < body["count"] < len(NOTES)
    assert body["count"] == len(body["results"])
    assert min(r["score"] for r in body["results"]) >= ranking.relevance_floor(LocalProvider.model)


def test_min_score_overrides_the_floor(api: Any, corpus: dict[str, str]) -> None:
    everything = search(api, NONSENSE[0], mode="semantic", min_score=-1)
    assert everything["count"] == len(NOTES)
    strict = search(api, QUERIES[0][0], mode="semantic", min_score=0.99)
    assert strict == {"results": [], "count": 0}
    # Hybrid keeps a keyword hit whatever its meaning score.
    kept = search(api, "kubectl", mode="hybrid", min_score=0.99)
    assert [r["id"] for r in kept["results"]] == [corpus["k8s"]]
    for bad in ("2", "-1.5", "abc", "nan"):
        body = assert_error(
            api.get("/api/search/", {"q": "x", "mode": "semantic", "min_score": bad}),
            400,
            "validation_error",
        )
        assert "min_score" in str(body)


class HangingServer:
    """Accepts connections on 127.0.0.1 and never answers (each is closed after ``hold``
    seconds so that a run of the old code ends too); counts them."""

    def __init__(self, port: int, hold: float = 5.0) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.hold, self.accepted, self.running = hold, 0, True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            threading.Timer(self.hold, conn.close).start()

    def stop(self) -> None:
        self.running = False
        self.thread.join()
        self.sock.close()


@pytest.fixture
def hanging(settings: Any) -> Iterator[HangingServer]:
    server = HangingServer(8171)
    settings.TIDDLY_EMBEDDINGS = "openai"
    settings.TIDDLY_EMBEDDINGS_URL = "http://127.0.0.1:8171/v1"
    settings.TIDDLY_EMBEDDINGS_MODEL = "hung-model"
    yield server
    server.stop()


def test_a_hung_provider_gets_one_short_try_per_search(api: Any, hanging: HangingServer) -> None:
    pk = make_note(api, "Backup plan", "restic prune and restore")
    started = time.monotonic()
    body = search(api, "restic", mode="hybrid")
    assert body["degraded"] is True
    assert [r["id"] for r in body["results"]] == [pk]
    assert hanging.accepted == 1
    response = api.get("/api/search/", {"q": "restic", "mode": "semantic"})
    assert_error(response, 503, "search_unavailable")
    assert hanging.accepted == 2
    # Indexing keeps its retries (not timed here: the query path's try is the bound).
    assert time.monotonic() - started < 60  # a generous sanity bound, not a benchmark
