"""Small helpers shared by the API test modules (URLs, DB snapshots, error-body checks)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from content.models import Bookmark, Item, ItemVersion, Note, Tag
from prompts.models import Prompt

MODELS: dict[str, type[Item]] = {"note": Note, "bookmark": Bookmark, "prompt": Prompt}

# A minimal valid create body per type.
CREATE_BODIES: dict[str, dict[str, Any]] = {
    "note": {"title": "A note", "content": "Note body"},
    "bookmark": {"url": "https://example.com/article", "title": "An article"},
    "prompt": {
        "name": "greet",
        "content": "Hello {{ who }}",
        "arguments": [{"name": "who", "description": "Whom", "required": True}],
    },
}


def list_url(kind: str) -> str:
    return reverse(f"{kind}-list")


def detail_url(kind: str, pk: Any) -> str:
    return reverse(f"{kind}-detail", args=[pk])


def action_url(kind: str, action: str, pk: Any) -> str:
    return reverse(f"{kind}-{action}", args=[pk])


def by_name_url(name: str) -> str:
    return reverse("prompt-by-name", kwargs={"name": name})


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    """Assert the SPEC §3.4 envelope and return the body."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    body = response.json()
    assert isinstance(body, dict), body
    assert body["error"] == code, body
    assert isinstance(body["message"], str), body
    assert body["message"], body
    return body


def db_state() -> dict[str, Any]:
    """Everything an API write could touch, to prove a failed request changed nothing."""
    state: dict[str, Any] = {}
    for kind, model in MODELS.items():
        rows = model.objects.order_by("pk").values()
        state[kind] = [dict(row) for row in rows]
        through = model.tags.through
        state[f"{kind}_tags"] = sorted(
            (str(a), str(b)) for a, b in through.objects.values_list(f"{kind}_id", "tag_id")
        )
    state["tags"] = sorted(Tag.objects.values_list("owner_id", "name"))
    state["versions"] = ItemVersion.objects.count()
    return state


def item_body(response: Any) -> dict[str, Any]:
    """An item GET's body as writes and conflicts show the item: without ``relationships``,
    which only an item's page (GET) carries."""
    return {k: v for k, v in response.json().items() if k != "relationships"}
