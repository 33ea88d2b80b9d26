"""Embedding providers for finding by meaning (SPEC §16): ``local``, ``openai`` or ``off``.

``provider()`` is the configured one, built once per process (the local model loads lazily, on
the first ``embed``). Every provider returns L2-normalised float32 rows, so a dot product is the
cosine similarity, and names its ``model``: vectors remember it and are never compared with
another model's. A provider that cannot answer raises ``ProviderUnavailable``; indexing then
waits and retries, and a search says it is degraded — a write never fails because of it.

The ``openai`` URL is the operator's own setting (often a localhost Ollama), not a user's, so it
is called directly rather than through the outbound-safety module that guards user URLs.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Protocol

import httpx
import numpy as np
from django.conf import settings

LOCAL_CONFIG = "l2_supercat"
LOCAL_DIM = 256
# Texts wordllama embeds at once: it holds a (batch, tokens, 256) float32 array. 64 (its default)
# peaked ~100 MB above the model on a 100 000-line note's chunks; 16 peaks ~20 MB and took
# less CPU (2.4 s instead of 3.7 s for 4 354 chunks: the array stays in cache).
LOCAL_BATCH = 16


class ProviderUnavailable(Exception):
    """The embedding provider is off or cannot answer now; ``str()`` says why."""


class Provider(Protocol):
    model: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


def _normalised(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms


class OffProvider:
    model = "off"

    def embed(self, texts: list[str]) -> np.ndarray:
        raise ProviderUnavailable("finding by meaning is off (TIDDLY_EMBEDDINGS=off)")


class LocalProvider:
    """wordllama's 256-dimension static model, shipped in its wheel: CPU only, no network."""

    model = f"wordllama/{LOCAL_CONFIG}-{LOCAL_DIM}"

    def __init__(self, cache_dir: Path | None = None) -> None:
        self._cache_dir = cache_dir
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = _load_wordllama(self._cache_dir)
            return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, LOCAL_DIM), dtype=np.float32)
        try:
            model = self._load()
        except Exception as exc:  # a broken install is "unavailable", never a failed write
            raise ProviderUnavailable(f"local model could not be loaded: {exc}") from exc
        return _normalised(model.embed(texts, norm=True, batch_size=LOCAL_BATCH))


def _load_wordllama(cache_dir: Path | None) -> Any:
    """Load the shipped weights with no network: wordllama's loader looks in ``<cache>/weights``
    and ``<cache>/tokenizers``, not in its package, so the shipped files are copied there once."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import wordllama
    from wordllama import WordLlama

    package = Path(wordllama.__file__).parent
    cache = cache_dir or Path(tempfile.gettempdir()) / "tiddly-wordllama"
    for sub, name in (
        ("weights", f"{LOCAL_CONFIG}_{LOCAL_DIM}.safetensors"),
        ("tokenizers", f"{LOCAL_CONFIG}_tokenizer_config.json"),
    ):
        target = cache / sub / name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_suffix(f".{os.getpid()}.part")
            shutil.copyfile(package / sub / name, partial)
            partial.replace(target)  # atomic: a concurrent process never reads half a file
    return WordLlama.load(
        config=LOCAL_CONFIG, dim=LOCAL_DIM, cache_dir=cache, disable_download=True
    )


class OpenAIProvider:
    """Any OpenAI-compatible ``POST {url}/embeddings`` (OpenAI, Ollama, vLLM, LM Studio)."""

    def __init__(
        self,
        *,
        url: str,
        model: str,
        api_key: str | None = None,
        batch: int = 64,
        retries: int = 3,
        timeout: float = 30.0,
        backoff: float = 0.5,
    ) -> None:
        self.url = url.rstrip("/")
        if not self.url.endswith("/embeddings"):
            self.url += "/embeddings"
        self.model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._batch, self._retries, self._timeout, self._backoff = batch, retries, timeout, backoff
        self._client: httpx.Client | None = None
        self._client_pid = 0
        self._client_lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        rows: list[list[float]] = []
        client = self._connected()
        for start in range(0, len(texts), self._batch):
            rows.extend(self._post(client, texts[start : start + self._batch]))
        return _normalised(np.array(rows, dtype=np.float32))

    def _connected(self) -> httpx.Client:
        """One client per process, kept: each query's embedding reuses its open connection (a
        TLS handshake per search otherwise). A forked child makes its own."""
        with self._client_lock:
            if self._client is None or self._client_pid != os.getpid():
                self._client = httpx.Client(timeout=self._timeout, headers=self._headers)
                self._client_pid = os.getpid()
            return self._client

    def _post(self, client: httpx.Client, batch: list[str]) -> list[list[float]]:
        last = "no attempt"
        for attempt in range(self._retries):
            if attempt:
                time.sleep(self._backoff * 2 ** (attempt - 1))
            try:
                response = client.post(self.url, json={"model": self.model, "input": batch})
            except httpx.HTTPError as exc:
                last = f"connection failed: {exc}"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                last = f"HTTP {response.status_code}"
                continue
            if response.status_code != 200:
                raise ProviderUnavailable(
                    f"embeddings endpoint answered HTTP {response.status_code}"
                )
            return _vectors(response, len(batch))
        raise ProviderUnavailable(f"embeddings endpoint unavailable ({last})")


def _vectors(response: httpx.Response, expected: int) -> list[list[float]]:
    try:
        data = sorted(response.json()["data"], key=lambda d: d.get("index", 0))
        rows = [[float(x) for x in d["embedding"]] for d in data]
    except (ValueError, KeyError, TypeError) as exc:
        raise ProviderUnavailable(f"embeddings endpoint answered malformed JSON: {exc}") from exc
    if len(rows) != expected or len({len(r) for r in rows}) != 1:
        raise ProviderUnavailable("embeddings endpoint answered the wrong number of vectors")
    return rows


def build_provider() -> Provider:
    kind = settings.TIDDLY_EMBEDDINGS
    if kind == "off":
        return OffProvider()
    if kind == "openai":
        return OpenAIProvider(
            url=settings.TIDDLY_EMBEDDINGS_URL,
            model=settings.TIDDLY_EMBEDDINGS_MODEL,
            api_key=settings.TIDDLY_EMBEDDINGS_API_KEY,
        )
    return LocalProvider(
        Path(settings.TIDDLY_EMBEDDINGS_CACHE) if settings.TIDDLY_EMBEDDINGS_CACHE else None
    )


@functools.cache
def _cached(kind: str, url: str, model: str) -> Provider:
    return build_provider()


#: A search waits at most this long for the ``openai`` provider, once (SPEC §16): a hung
#: endpoint then makes hybrid answer with keyword results and semantic with 503, at once.
QUERY_TIMEOUT = 2.0


@functools.cache
def _cached_for_queries(kind: str, url: str, model: str) -> Provider:
    if kind != "openai":
        return _cached(kind, url, model)
    return OpenAIProvider(
        url=settings.TIDDLY_EMBEDDINGS_URL,
        model=settings.TIDDLY_EMBEDDINGS_MODEL,
        api_key=settings.TIDDLY_EMBEDDINGS_API_KEY,
        retries=1,
        timeout=QUERY_TIMEOUT,
    )


def provider() -> Provider:
    """The configured provider, one per process and configuration (tests switch settings)."""
    return _cached(
        settings.TIDDLY_EMBEDDINGS, settings.TIDDLY_EMBEDDINGS_URL, settings.TIDDLY_EMBEDDINGS_MODEL
    )


def query_provider() -> Provider:
    """The provider a search embeds its query with: the configured one, except that ``openai``
    gets one try of at most ``QUERY_TIMEOUT`` seconds (indexing keeps its retries)."""
    return _cached_for_queries(
        settings.TIDDLY_EMBEDDINGS, settings.TIDDLY_EMBEDDINGS_URL, settings.TIDDLY_EMBEDDINGS_MODEL
    )
