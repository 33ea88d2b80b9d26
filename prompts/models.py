"""Prompt templates: a Jinja2 template with declared arguments, addressed by a unique name."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from content.models import Item, _item_indexes
from prompts.templating import TemplateValidationError, validate_template
from tiddly.errors import InvalidTemplate


class Prompt(Item):
    type_name = "prompt"
    metadata_fields = ("title", "description", "name", "arguments")

    name = models.CharField(max_length=100)
    arguments = models.JSONField(default=list, blank=True)

    class Meta(Item.Meta):
        indexes = _item_indexes("prompt")
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "name"],
                condition=Q(deleted_at__isnull=True),
                name="prompt_name_unique_among_live",
            )
        ]

    def __str__(self) -> str:
        return self.name

    def validate_state(self) -> None:
        try:
            validate_template(self.content, [arg["name"] for arg in self.arguments])
        except TemplateValidationError as exc:
            raise InvalidTemplate(str(exc)) from None
