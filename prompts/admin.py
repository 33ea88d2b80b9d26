"""The prompt admin: the shared item admin plus a name, a JSON arguments editor and validation.

Saving goes through ``create_item``/``update_item`` like every other item, so the template and its
arguments are validated exactly as the API validates them (SPEC §5.1) and a failure is shown on
the form with the API's message.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from content.admin.actions import unarchive_selected
from content.admin.forms import MONOSPACE, ItemAdminForm
from content.admin.item_history import HistoryAdminMixin
from content.admin.items import ItemAdmin
from content.admin.search import HELP
from prompts.api.serializers import ArgumentSerializer
from prompts.models import Prompt

ARGUMENTS_EXAMPLE = '[{"name": "code", "description": "The code to review", "required": true}]'


class PromptAdminForm(ItemAdminForm):
    service_fields = ("name", "title", "description", "content")

    arguments = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(
            attrs={"rows": 8, "class": "vLargeTextField", "style": MONOSPACE, "spellcheck": "false"}
        ),
        help_text=(
            "A JSON list of the template's variables, each <code>{name, description, required}"
            f"</code>, e.g. <code>{ARGUMENTS_EXAMPLE}</code>. Every variable the template uses "
            "must be listed, and every listed argument must be used. Empty = no arguments."
        ),
    )

    class Meta(ItemAdminForm.Meta):
        help_texts = {
            **ItemAdminForm.Meta.help_texts,
            "name": "How agents address the prompt: lower-case letters, digits and single "
            "hyphens, e.g. <code>code-review</code>. Unique among your prompts.",
            "content": "A Jinja2 template, e.g. <code>Review this: {{ code }}</code>.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.adding:
            self.initial["arguments"] = text = json.dumps(self.instance.arguments, indent=2)
            self.fields["arguments"].widget.attrs["rows"] = min(max(text.count("\n") + 2, 6), 30)

    def clean_arguments(self) -> list[dict[str, Any]]:
        """Parse the JSON and check its shape with the API's own serializer."""
        raw = self.cleaned_data.get("arguments") or ""
        if not raw.strip():
            return []
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"Arguments are not valid JSON: {exc.msg} (line {exc.lineno}, column "
                f"{exc.colno}). Expected a list such as {ARGUMENTS_EXAMPLE}"
            ) from None
        serializer = ArgumentSerializer(data=value, many=True)
        if not serializer.is_valid():
            raise ValidationError(_argument_errors(serializer.errors))
        return [dict(arg) for arg in serializer.validated_data]

    def service_data(self) -> dict[str, Any]:
        data = super().service_data()
        if "arguments" in self.cleaned_data:
            data["arguments"] = self.cleaned_data["arguments"]
        return data


def _argument_errors(errors: Any) -> list[str]:
    """DRF's errors (``{index: {field: [msg]}}``, or ``{"non_field_errors": [msg]}`` when the value
    is not a list) as sentences naming the argument's position."""
    if isinstance(errors, list):  # older DRF: one dict per argument
        errors = dict(enumerate(errors))
    sentences: list[str] = []
    for key, detail in errors.items():
        if not isinstance(key, int):
            sentences += [f"Arguments: {message}" for message in detail]
            continue
        entries = detail.items() if isinstance(detail, dict) else [("", detail)]
        for field, messages in entries:
            named = field and field != "non_field_errors"
            where = f"Argument {key + 1}: {field}: " if named else f"Argument {key + 1}: "
            sentences += [where + str(message) for message in messages]
    return sentences


@admin.register(Prompt)
class PromptAdmin(HistoryAdminMixin, ItemAdmin):
    form = PromptAdminForm
    main_fields = ("name", "title", "description", "tags", "content", "arguments")
    list_display = (
        "name",
        "title",
        "owner",
        "state",
        "argument_names",
        "tag_list",
        "updated",
        "content_length",
    )
    search_fields = ("name", "title", "description", "content")
    search_help_text = (
        "Searches name, title, description and the template (substring); or an id." + HELP
    )
    # Archived prompts are invisible to agents until restored: that action comes first here.
    actions = (unarchive_selected, *(a for a in ItemAdmin.actions if a is not unarchive_selected))

    @admin.display(description="arguments")
    def argument_names(self, obj: Prompt) -> str:
        return ", ".join(
            arg["name"] + ("" if arg.get("required") else "?") for arg in obj.arguments
        )
