"""Prompt templates: a Jinja2 template with declared arguments, addressed by a unique name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import models

from content import rules
from content.errors import NameConflict
from content.models import Item, item_indexes, unique_among_live
from prompts.rules import normalize_arguments, normalize_prompt_name
from prompts.templating import TemplateValidationError, validate_template
from tiddly.errors import InvalidTemplate


class Prompt(Item):
    type_name = "prompt"
    scope_area = "prompts"
    metadata_fields = ("title", "description", "name", "arguments")
    extra_fields = ("name", "arguments")
    search_fields = ("title", "description", "content", "name")
    title_fallback = "name"
    unique_field = "name"
    conflict_error = NameConflict
    name_field = "name"
    import_keys = ("id", "name")
    content_is_template = True

    name = models.CharField(max_length=100)
    arguments = models.JSONField(default=list, blank=True)

    class Meta(Item.Meta):
        indexes = item_indexes("prompt")
        constraints = [unique_among_live("prompt", "name")]

    def __str__(self) -> str:
        return self.name

    def label(self) -> str:
        return f"prompt '{self.name}'"

    def apply_type_fields(self, data: Mapping[str, Any], *, creating: bool) -> None:
        if creating or "name" in data:
            if data.get("name") is None:
                raise rules.invalid("name", "A prompt's name is required and cannot be null.")
            self.name = normalize_prompt_name(data["name"])
        if creating or "content" in data:
            rules.require_text("content", self.content, "A prompt's content (its template)")
        if "arguments" in data:
            # Explicit null clears the list, like null clears any other clearable field.
            self.arguments = normalize_arguments(data["arguments"] or [])

    def validate_state(self) -> None:
        try:
            validate_template(self.content, [arg["name"] for arg in self.arguments])
        except TemplateValidationError as exc:
            raise InvalidTemplate(str(exc)) from None
