"""The owner's tag names a caller may be offered (suggestions, typo tolerance): SPEC §8.1 says a
caller sees only the areas it can read, and a tag's name tells what it is used on."""

from __future__ import annotations

from collections.abc import Collection
from functools import reduce
from operator import or_
from typing import Any

from django.db.models import Q, QuerySet

from content import item_types
from content.models import Tag


def visible_tag_names(owner: Any, types: Collection[str] | None) -> QuerySet[Tag, str]:
    """Names of the owner's tags that are on an item of ``types`` or on no item at all — never
    one used only on items the caller cannot read (a prompt-only tag for a content token).
    ``types`` None: every type."""
    tags = Tag.objects.filter(owner=owner)
    hidden = [
        m for name, m in item_types.registry().items() if types is not None and name not in types
    ]
    if hidden:
        seen = [m for name, m in item_types.registry().items() if m not in hidden]
        tags = tags.exclude(_used_on(hidden) & ~_used_on(seen))
    return tags.values_list("name", flat=True)


def _used_on(models: list[Any]) -> Q:
    """Tags carried by an item of one of ``models`` (an empty list: none)."""
    if not models:
        return Q(pk__in=[])
    return reduce(or_, (Q(pk__in=m.tags.through._default_manager.values("tag_id")) for m in models))
