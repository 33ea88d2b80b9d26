"""Renaming and deleting tags (SPEC §10): saved filters' expressions follow the tag."""

from __future__ import annotations

from django.db import transaction

from content import rules
from content.errors import NameConflict
from content.models import Tag
from content.queries.items import Owner
from content.services.filters import check_tag_unused, rename_tag_in_expressions
from tiddly.errors import NotFound


@transaction.atomic
def rename_tag(*, owner: Owner, name: str, new_name: str) -> Tag:
    tag = _tag(owner, name)
    target = check_rename_tag(owner=owner, tag=tag, new_name=new_name)
    if target != tag.name:
        rename_tag_in_expressions(tag, target)
        tag.name = target
        tag.save(update_fields=["name"])
    return tag


def check_rename_tag(*, owner: Owner, tag: Tag, new_name: str) -> str:
    """The normalised new name, or the error ``rename_tag`` would raise (writes nothing)."""
    (target,) = rules.normalize_tags([new_name]) or [""]
    if not target:
        raise rules.invalid("name", "The new tag name cannot be blank.")
    if target != tag.name and Tag.objects.filter(owner=owner, name=target).exists():
        raise NameConflict(
            f"A tag named '{target}' already exists. Pick another name, or delete one of the tags."
        )
    return target


@transaction.atomic
def delete_tag(*, owner: Owner, name: str) -> None:
    tag = _tag(owner, name)
    check_tag_unused(tag)
    tag.delete()


def _tag(owner: Owner, name: str) -> Tag:
    tag = None
    if rules.storable(name):
        tag = Tag.objects.filter(owner=owner, name=name.strip().lower()).first()
    if tag is None:
        raise NotFound(f"No tag named '{name}' was found.")
    return tag
