"""Helpers for the version-history tests: write through the services so history is recorded."""

from __future__ import annotations

import random
from typing import Any

from content import history, services
from content.history import Actor
from content.models import Item, ItemVersion, Note
from content.services import ItemRef


def ref(item: Item) -> ItemRef:
    return ItemRef(type(item), pk=item.pk)


def make_note(owner: Any, content: str | None = "one\ntwo\nthree\n", **data: Any) -> Note:
    item = services.create_item(
        owner=owner,
        model=Note,
        data={"title": "A note", "content": content, **data},
        actor=Actor(),
    )
    assert isinstance(item, Note)
    return item


def edit(owner: Any, item: Item, old: str, new: str, actor: Actor | None = None) -> Item:
    return services.edit_content(
        owner=owner, ref=ref(item), old_str=old, new_str=new, actor=actor or Actor()
    ).item


def update(owner: Any, item: Item, actor: Actor | None = None, **data: Any) -> Item:
    return services.update_item(owner=owner, ref=ref(item), data=data, actor=actor or Actor())


def rows(item: Item) -> list[ItemVersion]:
    """Versioned rows, oldest first."""
    return list(history.item_versions(item).filter(version__isnull=False).order_by("version"))


def numbers(item: Item) -> list[int | None]:
    return [row.version for row in rows(item)]


def current(item: Item) -> str | None:
    return type(item).objects.values_list("content", flat=True).get(pk=item.pk)


def stored_chars(row: ItemVersion) -> int:
    return len(row.content_patch or "") + len(row.content_snapshot or "")


def large_document(chars: int = 1_000_000, width: int = 49, seed: int = 0) -> str:
    """``chars`` characters of ``width``-character random lines (chars must divide evenly)."""
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz     "
    lines = chars // (width + 1)
    return "".join("".join(rng.choices(alphabet, k=width)) + "\n" for _ in range(lines))
