"""The admin's add/change forms: validated by the services, saved by the services.

``is_valid()`` runs every check the service would (``services.check_create``/``check_update``)
and writes nothing; a ``TiddlyError`` becomes an error on the field it is about, with the API's
message. ``save()`` then calls the service itself, so a valid save records a version with source
``admin`` exactly as the API would.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from django import forms
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html

from content import services
from content.errors import FieldLimitExceeded, NameConflict, StaleItem, UrlConflict
from content.history import Actor
from content.models import Item
from content.queries import ItemRef
from content.services import Precondition
from tiddly.errors import InvalidTemplate, TiddlyError, ValidationFailed

ADMIN_ACTOR = Actor(source="admin")
# Content is edited by agents with exact-match replacements: show its whitespace faithfully.
MONOSPACE = "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;"


def _blank_to_none(value: Any) -> Any:
    return None if value == "" else value


def _same_text(value: str | None, initial: str | None) -> str | None:
    """Undo the browser's CRLF: a textarea always posts \\r\\n, whatever the stored text used."""
    if value is None or "\r\n" not in value:
        return value
    if initial is not None and "\r\n" in initial:
        return value  # the text already used CRLF: keep what was posted
    return value.replace("\r\n", "\n")


def _differs(current: Any, posted: Any) -> bool:
    if isinstance(current, datetime) and isinstance(posted, datetime):
        return current.replace(microsecond=0) != posted.replace(microsecond=0)  # form has seconds
    return bool(current != posted)


def _add_service_error(form: forms.BaseForm, exc: TiddlyError) -> None:
    """Put a service error on the form field it is about (the API's message), else on top."""

    def add(field: str | None, message: str) -> None:
        form.add_error(field if field in form.fields else None, message)

    if isinstance(exc, ValidationFailed) and exc.extra.get("fields"):
        for field, msgs in exc.extra["fields"].items():
            for message in msgs:
                add(field, message)
    elif isinstance(exc, FieldLimitExceeded):
        field = str(exc.extra.get("field", ""))
        add({"tag": "tags", "argument": "arguments"}.get(field.split(" ")[0], field), exc.message)
    elif isinstance(exc, NameConflict | UrlConflict):
        field = "name" if isinstance(exc, NameConflict) else "url"
        add(field, exc.message)
        if exc.extra.get("existing_id") and isinstance(form, forms.ModelForm):
            opts = form._meta.model._meta
            url = reverse(
                f"admin:{opts.app_label}_{opts.model_name}_change", args=[exc.extra["existing_id"]]
            )
            add(
                field, format_html('<a href="{}">Open the existing {}</a>.', url, opts.verbose_name)
            )
    elif isinstance(exc, InvalidTemplate):
        add("content", exc.message)  # the template is the content; arguments are named in it
    elif isinstance(exc, StaleItem):
        add(
            None,
            "This item was changed (by someone else, an agent or another tab) after you opened "
            "this page. Nothing was saved. Reload the page to see the current version, then "
            "re-apply your edit.",
        )
    else:
        add(None, exc.message)


class ServiceForm(forms.ModelForm):
    """A ModelForm whose model-level validation and saving are the service's.

    Django would normally validate the instance (``full_clean``, unique constraints) and save it.
    Here ``_post_clean`` runs the service's checks (``check_service``, no writes) so a
    ``TiddlyError`` becomes a form error with the API's message, and ``save()`` calls the service
    (``run_service``) and returns what it saved.
    """

    admin_user: ClassVar[Any] = None  # the signed-in user; set by the ModelAdmin's get_form()

    def _post_clean(self) -> None:
        if self.errors:
            return
        try:
            self.check_service()
        except TiddlyError as exc:
            _add_service_error(self, exc)

    def check_service(self) -> None:
        raise NotImplementedError

    def run_service(self) -> Any:
        raise NotImplementedError

    def save(self, commit: bool = True) -> Any:
        self.instance = self.run_service()
        return self.instance

    def save_m2m(self) -> None:
        """Nothing left to save: the service set the tags (the admin calls this after ``save``)."""

    @property
    def adding(self) -> bool:
        return bool(self.instance._state.adding)


class ItemAdminForm(ServiceForm):
    """Bookmark/note (and, subclassed, prompt) form: saves with create_item/update_item."""

    # Fields passed to the services when present on the form; tags are added separately.
    service_fields: ClassVar[tuple[str, ...]] = ("title", "description", "content", "url")

    tags = forms.CharField(
        required=False,
        widget=forms.TextInput(attrs={"class": "vLargeTextField"}),
        help_text="Comma-separated, e.g. <code>python, machine-learning</code>. Lower-case "
        "letters, digits and single hyphens; new tags are created.",
    )
    loaded_updated_at = forms.CharField(required=False, widget=forms.HiddenInput)

    class Meta:
        widgets = {
            "title": forms.TextInput(attrs={"class": "vLargeTextField"}),
            # Not type=url: the browser's check would hide the service's message.
            "url": forms.TextInput(attrs={"class": "vURLField"}),
            "description": forms.Textarea(attrs={"rows": 3, "class": "vLargeTextField"}),
            "content": forms.Textarea(
                attrs={
                    "rows": 24,
                    "class": "vLargeTextField",
                    "style": MONOSPACE,
                    "spellcheck": "false",
                }
            ),
        }
        help_texts = {
            "archived_at": "Empty = not archived. A past time archives the item; a future time "
            "schedules it (it stays active until then).",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        content = self.fields.get("content")
        if isinstance(content, forms.CharField):
            content.strip = False  # whitespace is content (indentation, Markdown)
        if not self.adding:
            self.initial["tags"] = ", ".join(self.instance.tag_names())
            self.initial["loaded_updated_at"] = self.instance.updated_at.isoformat()

    def clean_content(self) -> str | None:
        initial = None if self.adding else self.instance.content
        return _blank_to_none(_same_text(self.cleaned_data.get("content"), initial))

    def clean_loaded_updated_at(self) -> datetime | None:
        raw = self.cleaned_data.get("loaded_updated_at") or ""
        return parse_datetime(raw) if raw else None

    def service_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            name: _blank_to_none(self.cleaned_data[name])
            for name in self.service_fields
            if name in self.cleaned_data
        }
        if "archived_at" in self.cleaned_data:
            data["archived_at"] = self.cleaned_data["archived_at"]
        if "tags" in self.cleaned_data:
            data["tags"] = self.cleaned_data["tags"].split(",")
        return data

    def _changes(self, data: dict[str, Any]) -> dict[str, Any]:
        item = self.instance
        return {k: v for k, v in data.items() if k == "tags" or _differs(getattr(item, k), v)}

    def _precondition(self) -> Precondition:
        return Precondition(self.cleaned_data.get("loaded_updated_at"))

    def check_service(self) -> None:
        model = self._meta.model
        if self.adding:
            owner = self.cleaned_data.get("owner") or self.admin_user
            services.check_create(
                owner=owner, model=model, data=services.item_fields(self.service_data())
            )
            return
        services.check_update(
            owner=self.instance.owner,
            ref=ItemRef(model, pk=self.instance.pk),
            data=services.item_fields(self._changes(self.service_data())),
            precondition=self._precondition(),
        )

    def run_service(self) -> Item:
        model = self._meta.model
        data = self.service_data()
        if self.adding:
            owner = self.cleaned_data.get("owner") or self.admin_user
            return services.create_item(
                owner=owner, model=model, data=services.item_fields(data), actor=ADMIN_ACTOR
            )
        return services.update_item(
            owner=self.instance.owner,
            ref=ItemRef(model, pk=self.instance.pk),
            data=services.item_fields(self._changes(data)),
            actor=ADMIN_ACTOR,
            precondition=self._precondition(),
        )
