"""Tags by name: item writes and saved filters both create the tags they name."""

from __future__ import annotations

from typing import Any

from content.models import Tag


def get_or_create_tags(owner_id: Any, names: list[str]) -> list[Tag]:
    """The owner's tags with these (normalised) names, in order; missing ones are created."""
    existing = {t.name: t for t in Tag.objects.filter(owner_id=owner_id, name__in=names)}
    missing = [Tag(owner_id=owner_id, name=n) for n in names if n not in existing]
    if missing:
        Tag.objects.bulk_create(missing, ignore_conflicts=True)
        existing = {t.name: t for t in Tag.objects.filter(owner_id=owner_id, name__in=names)}
    return [existing[n] for n in names]
