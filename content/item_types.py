"""The item-type registry: every concrete ``Item`` subclass Django knows, by ``type_name``.

Nothing is registered by hand: installing an app whose models subclass ``Item`` adds its type
(bookmarks and notes here, prompts in ``prompts``). Code that must handle "any type" asks this
module for the class and then reads what the class declares, instead of switching on a name.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from django.apps import apps

from content.models import Item
from tiddly.errors import ValidationFailed


@cache
def registry() -> dict[str, type[Item]]:
    """Every item type, in ``INSTALLED_APPS`` order (bookmark, note, prompt)."""
    return {
        model.type_name: model
        for model in apps.get_models()
        if issubclass(model, Item) and model.type_name
    }


def type_names() -> list[str]:
    return list(registry())


def types_in(areas: Iterable[str]) -> list[str]:
    """The item types whose scope area is one of ``areas`` (SPEC §8.1), in registry order."""
    wanted = set(areas)
    return [name for name, model in registry().items() if model.scope_area in wanted]


def model_for(type_name: str) -> type[Item]:
    try:
        return registry()[type_name]
    except KeyError:
        raise ValidationFailed(
            {"type": [f"Unknown type {type_name!r}. Valid types: {', '.join(registry())}."]}
        ) from None
