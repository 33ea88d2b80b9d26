"""Saved filters (SPEC §11), the write side: create, update, delete, and the tag renames/deletes
that reach into expressions.

Tags are normalised like item tags and created when missing; the filter's ``tags`` relation mirrors
them so tag renames and deletes find the filters using a tag.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from content import item_types, rules
from content.errors import FieldLimitExceeded, NameConflict, TagInUse
from content.models import SavedFilter, Tag
from content.queries.filters import get_filter
from content.tags import get_or_create_tags
from tiddly.errors import ValidationFailed


@transaction.atomic
def create_filter(*, owner: Any, data: Mapping[str, Any]) -> SavedFilter:
    saved = SavedFilter(owner=owner)
    tags = _apply(saved, data, creating=True)
    _save(saved, force_insert=True)
    saved.tags.set(get_or_create_tags(saved.owner_id, tags))
    return saved


@transaction.atomic
def update_filter(*, owner: Any, filter_id: object, data: Mapping[str, Any]) -> SavedFilter:
    """Partial update: absent keys stay; ``expression`` and ``content_types`` replace wholly."""
    saved = get_filter(owner, filter_id)
    saved = SavedFilter.objects.select_for_update().get(pk=saved.pk)
    tags = _apply(saved, data, creating=False)
    saved.updated_at = timezone.now()
    _save(saved)
    if "expression" in data:
        saved.tags.set(get_or_create_tags(saved.owner_id, tags))
    return saved


def check_filter(*, owner: Any, data: Mapping[str, Any], instance: SavedFilter | None) -> None:
    """Every check ``create_filter``/``update_filter`` make, writing nothing (the admin's form)."""
    saved = SavedFilter(owner=owner) if instance is None else instance
    probe = SavedFilter(
        pk=saved.pk,
        owner_id=owner.pk,
        name=saved.name,
        content_types=saved.content_types,
        expression=saved.expression,
    )
    _apply(probe, data, creating=instance is None)
    _check_name_free(probe)


@transaction.atomic
def delete_filter(*, owner: Any, filter_id: object) -> None:
    get_filter(owner, filter_id).delete()


def rename_tag_in_expressions(tag: Tag, new_name: str) -> None:
    """Rewrite every expression using ``tag`` (called by ``rename_tag``, in its transaction)."""
    for saved in SavedFilter.objects.select_for_update().filter(tags=tag):
        groups = [[new_name if t == tag.name else t for t in tags] for tags in saved.groups]
        saved.expression = _expression([list(dict.fromkeys(g)) for g in groups])
        saved.save(update_fields=["expression"])


def check_tag_unused(tag: Tag) -> None:
    """Deleting a tag a filter uses would silently change what the filter shows: refuse."""
    using = list(SavedFilter.objects.filter(tags=tag).order_by("name").values("id", "name"))
    if using:
        names = ", ".join(f"'{f['name']}'" for f in using)
        raise TagInUse(
            f"The tag '{tag.name}' is used by the saved filter(s) {names}. Remove it from those "
            "filters' expressions (PATCH /api/filters/{id}/) or delete the filters first.",
            filters=[{"id": str(f["id"]), "name": f["name"]} for f in using],
        )


def _apply(saved: SavedFilter, data: Mapping[str, Any], *, creating: bool) -> list[str]:
    """Validate and set the given fields; return every tag the expression uses."""
    if creating or "name" in data:
        saved.name = _name(data.get("name"))
    if creating or "content_types" in data:
        saved.content_types = _types(data.get("content_types"))
    if creating or "expression" in data:
        saved.expression = _expression(_groups(data.get("expression") or {}))
    if "default_sort_by" in data:
        saved.default_sort_by = data["default_sort_by"]
    if data.get("default_sort_order") is not None:
        saved.default_sort_order = data["default_sort_order"]
    return list(dict.fromkeys(t for group in saved.groups for t in group))


def _name(value: Any) -> str:
    name = rules.require_text("name", value, "A filter's name").strip()
    rules.check_length("name", name, "filter_name")
    return name


def _types(value: Any) -> list[str]:
    known = item_types.type_names()
    types = list(dict.fromkeys(value or []))
    unknown = [t for t in types if t not in known]
    if unknown or not types:
        raise rules.invalid(
            "content_types",
            f"Invalid content_types {unknown or '[]'}: give a non-empty list of "
            f"{', '.join(known)}.",
        )
    return [t for t in known if t in types]  # registry order, whatever the input order


def _groups(expression: Mapping[str, Any]) -> list[list[str]]:
    operator = expression.get("group_operator", "or")
    if operator != "or":
        raise rules.invalid(
            "expression.group_operator",
            f"Unknown group_operator {operator!r}: only 'or' is supported (AND goes inside a "
            "group: an item matches a group when it has all of the group's tags).",
        )
    groups = expression.get("groups") or []
    if len(groups) > rules.limit("filter_groups"):
        raise FieldLimitExceeded(
            "expression.groups", len(groups), rules.limit("filter_groups"), unit="groups"
        )
    return [_group_tags(i, group) for i, group in enumerate(groups)]


def _group_tags(index: int, group: Mapping[str, Any]) -> list[str]:
    field = f"expression.groups[{index}].tags"
    try:
        tags = rules.normalize_tags(group.get("tags") or [])
    except ValidationFailed as exc:
        raise ValidationFailed({field: exc.extra["fields"]["tags"]}) from None
    if not tags:
        raise rules.invalid(field, "A group needs at least one tag; drop empty groups.")
    return tags


def _expression(groups: list[list[str]]) -> dict[str, Any]:
    return {"groups": [{"tags": tags} for tags in groups], "group_operator": "or"}


def _save(saved: SavedFilter, *, force_insert: bool = False) -> None:
    """Save, turning a taken name (checked first, or a lost race) into ``name_conflict``."""
    try:
        _check_name_free(saved)
        with transaction.atomic():
            saved.save(force_insert=force_insert)
    except IntegrityError:
        _check_name_free(saved)
        raise


def _check_name_free(saved: SavedFilter) -> None:
    clash = (
        SavedFilter.objects.filter(owner_id=saved.owner_id, name=saved.name)
        .exclude(pk=saved.pk)
        .values_list("pk", flat=True)
        .first()
    )
    if clash is not None:
        raise NameConflict(
            f"You already have a saved filter named '{saved.name}'. Pick another name, or "
            "update that filter (existing_id) with PATCH /api/filters/{id}/.",
            existing_id=str(clash),
        )
