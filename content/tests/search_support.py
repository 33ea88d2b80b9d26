"""Helpers for the search tests: build notes through the API and run the indexing task."""

from __future__ import annotations

from typing import Any

import pytest

from content.models.search import SearchDirty
from content.search import semantic, typos
from tiddly.tasks import run_tasks


@pytest.fixture(autouse=True)
def _fresh_index(settings: Any, monkeypatch: Any) -> None:
    settings.TIDDLY_EMBEDDINGS = "local"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    semantic.clear()  # owner ids repeat between tests; the process caches must not
    typos.clear()


def make_note(api: Any, title: str, content: str, tags: list[str] | None = None) -> str:
    body = {"title": title, "content": content, "tags": tags or []}
    response = api.post("/api/notes/", body, format="json")
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def index() -> None:
    """Run the queued indexing task(s) through the real queue, as the worker would."""
    assert run_tasks() >= 1
    assert not SearchDirty.objects.exists()


def search(api: Any, q: str, **params: Any) -> dict[str, Any]:
    response = api.get("/api/search/", {"q": q, **params})
    assert response.status_code == 200, response.content
    return response.json()
