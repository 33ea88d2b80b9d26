"""Set-up shared by the tests of the agent editing actions (partial read, search, str-replace).

Items are made through ``services.create_item`` so they have a version 1, like real items, and
version counts before/after a request prove whether it wrote history.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from itertools import count
from typing import Any

from django.db import connection
from django.urls import reverse

from content import services
from content.history import Actor
from content.models import Bookmark, Item, ItemVersion, Note
from prompts.models import Prompt

TYPES = ("bookmark", "note", "prompt")
# Prompts require content, so "null content" cases run on these only.
NULLABLE_TYPES = ("bookmark", "note")
MODELS: dict[str, type[Item]] = {"bookmark": Bookmark, "note": Note, "prompt": Prompt}

_serial = count(1)


def make_item(owner: Any, kind: str, **data: Any) -> Any:
    """Create a ``kind`` item for ``owner`` through the service; ``data`` overrides the defaults.

    A bookmark made here is never captured (``capture=False``): these tests are about its text,
    and a bookmark created without content would otherwise start a capture (SPEC §15)."""
    n = next(_serial)
    defaults: dict[str, Any] = {
        "bookmark": {"url": f"https://example.com/page-{n}", "content": "text"},
        "note": {"title": f"Note {n}", "content": "text"},
        "prompt": {"name": f"prompt-{n}", "content": "text"},
    }[kind]
    options = (
        services.CreateOptions(capture=False) if kind == "bookmark" else services.CreateOptions()
    )
    item = services.create_item(
        owner=owner, model=MODELS[kind], data={**defaults, **data}, actor=Actor(), options=options
    )
    return MODELS[kind].objects.get(pk=item.pk)


def url(kind: str, action: str, pk: Any) -> str:
    """``detail``, ``search`` or ``str-replace`` URL of an item by id."""
    return reverse(f"{kind}-{action}", args=[pk])


def by_name_url(name: str, *, str_replace: bool = False) -> str:
    if str_replace:
        return reverse("prompt-str-replace-by-name", kwargs={"name": name})
    return reverse("prompt-by-name", kwargs={"name": name})


def iso(value: datetime | None) -> str | None:
    """A datetime as the API writes it (UTC with ``Z``)."""
    if value is None:
        return None
    return value.isoformat().replace("+00:00", "Z")


def expected_item(item: Any, **overrides: Any) -> dict[str, Any]:
    """The full JSON of ``item`` as GET returns it, built from the row (not the serializer)."""
    item = type(item).objects.get(pk=item.pk)
    content = item.content
    body: dict[str, Any] = {
        "id": str(item.pk),
        "type": item.type_name,
        "title": item.title,
        "description": item.description,
        "tags": sorted(tag.name for tag in item.tags.all()),
        "state": item.state,
        "content": content,
        "content_length": None if content is None else len(content),
        "content_metadata": None
        if content is None
        else {
            "total_lines": content.count("\n") + 1,
            "start_line": 1,
            "end_line": content.count("\n") + 1,
            "is_partial": False,
        },
        "created_at": iso(item.created_at),
        "updated_at": iso(item.updated_at),
        "last_used_at": iso(item.last_used_at),
        "archived_at": iso(item.archived_at),
        "deleted_at": iso(item.deleted_at),
    }
    body["share"] = None  # SPEC §17.4: no link unless shared
    if item.type_name == "bookmark":
        body["url"] = item.url
        body["capture"] = None  # SPEC §15: created with content, nothing was fetched
    if item.type_name == "prompt":
        body["name"] = item.name
        body["arguments"] = item.arguments
    return {**body, **overrides}


def versions(item: Any) -> list[ItemVersion]:
    """The item's numbered versions, oldest first."""
    return list(
        ItemVersion.objects.filter(
            item_type=item.type_name, item_id=item.pk, version__isnull=False
        ).order_by("version")
    )


def row_state(item: Any) -> dict[str, Any]:
    """What a failed edit must leave untouched: the row's fields and its history."""
    row = type(item).objects.filter(pk=item.pk).values().get()
    return {"row": row, "history": ItemVersion.objects.filter(item_id=item.pk).count()}


THREAD_TIMEOUT = 60


def in_threads(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run ``work(i)`` in ``count`` threads released together; return results or exceptions."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def target(index: int) -> None:
        try:
            barrier.wait(timeout=THREAD_TIMEOUT)
            results[index] = work(index)
        except Exception as exc:  # reported by the test, not lost in the thread
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=target, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(THREAD_TIMEOUT)
    assert not any(thread.is_alive() for thread in threads), "an edit hung"
    return results
