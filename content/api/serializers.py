"""Request validation and response shapes for the item API (and the MCP bridge's results).

Input serializers only check types and shape — and reject unknown fields, so a typo in a field
name is an error rather than a silent no-op. Limits, normalisation and uniqueness are the
services' job, so REST, admin and MCP enforce them identically.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from content.editing import count_lines
from content.models import ItemState
from content.queries import PREVIEW_CHARS
from tiddly.errors import register_item_serializer

_WHITESPACE = re.compile(r"\s+")


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not declare."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                allowed = ", ".join(sorted(self.fields)) or "none (send no body)"
                raise serializers.ValidationError(
                    {name: [f"Unknown field. Allowed fields: {allowed}."] for name in unknown}
                )
        return super().to_internal_value(data)


_SURROGATE = re.compile("[\ud800-\udfff]")


class NoSurrogates(ProhibitSurrogateCharactersValidator):
    """DRF's check, in linear C time: its per-character Python loop took 1.1 s on a 6 MB note.

    An ASCII string (``isascii`` is O(1) in CPython) cannot hold a surrogate; otherwise a regex
    finds the first one.
    """

    def __call__(self, value: Any) -> None:
        text_value = str(value)
        if text_value.isascii():
            return
        found = _SURROGATE.search(text_value)
        if found:
            message = self.message.format(code_point=ord(found.group()))
            raise DjangoValidationError(message, code=self.code)


class StringField(serializers.CharField):
    """A CharField that wants a JSON string: DRF's would turn 42 or 1e30 into "42"/"1e+30"."""

    default_error_messages = {"invalid": "Must be a string."}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.validators = [
            NoSurrogates() if isinstance(v, ProhibitSurrogateCharactersValidator) else v
            for v in self.validators
        ]

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)  # type: ignore[no-any-return]


def text(**kwargs: Any) -> serializers.CharField:
    """Text stored verbatim: whitespace is content (an agent's indentation must survive)."""
    return StringField(trim_whitespace=False, **kwargs)


def optional_text(**kwargs: Any) -> serializers.CharField:
    return text(required=False, allow_null=True, allow_blank=True, **kwargs)


class ArgumentSerializer(StrictSerializer):
    name = StringField(help_text="Variable name used in the template: ^[a-z][a-z0-9_]*$")
    description = optional_text(help_text="What the argument is for (shown to agents).")
    required = serializers.BooleanField(required=False, default=False)


TAGS_HELP = "Tag names (lower-case, hyphenated). A full replacement: the item gets exactly these."


def tags_field() -> serializers.ListField:
    return serializers.ListField(
        child=StringField(), required=False, allow_empty=True, help_text=TAGS_HELP
    )


class ItemWriteSerializer(StrictSerializer):
    title = optional_text()
    description = optional_text()
    content = optional_text()
    tags = tags_field()
    archived_at = serializers.DateTimeField(
        required=False, allow_null=True, help_text="Past = archived now; future = scheduled."
    )


class UpdateMixin(serializers.Serializer):
    expected_updated_at = serializers.DateTimeField(
        required=False,
        help_text="Optimistic lock: the updated_at you last read. 409 + server_state if stale.",
    )


class NoteCreateSerializer(ItemWriteSerializer):
    title = text(help_text="Required, non-blank.")


class NoteUpdateSerializer(ItemWriteSerializer, UpdateMixin):
    pass


class BookmarkCreateSerializer(ItemWriteSerializer):
    url = StringField(help_text="http(s) URL, unique among your live bookmarks.")


class BookmarkUpdateSerializer(ItemWriteSerializer, UpdateMixin):
    url = StringField(required=False, allow_null=True)


class PromptCreateSerializer(ItemWriteSerializer):
    name = StringField(help_text="Unique name: ^[a-z0-9]+(-[a-z0-9]+)*$")
    content = text(help_text="The Jinja2 template. Required, non-blank.")
    arguments = ArgumentSerializer(many=True, required=False)


class PromptUpdateSerializer(ItemWriteSerializer, UpdateMixin):
    name = StringField(required=False, allow_null=True, help_text="Rename the prompt.")
    arguments = ArgumentSerializer(
        many=True, required=False, allow_null=True, help_text="Full replacement of the list."
    )


class StrReplaceSerializer(StrictSerializer):
    old_str = text(
        help_text="Text to find; must match exactly one place. Include surrounding lines to make "
        "it unique."
    )
    new_str = text(allow_blank=True, help_text="Replacement text; empty deletes old_str.")
    expected_updated_at = serializers.DateTimeField(required=False)


class PromptStrReplaceSerializer(StrReplaceSerializer):
    arguments = ArgumentSerializer(
        many=True,
        required=False,
        allow_null=True,
        help_text="Full replacement of the argument list, applied atomically with the edit.",
    )


class StrReplaceQuerySerializer(StrictSerializer):
    include_updated_entity = serializers.BooleanField(
        required=False, default=False, help_text="Return the full updated item as `item`."
    )


class LineRangeQuerySerializer(serializers.Serializer):
    start_line = serializers.IntegerField(
        required=False, max_value=2**31, help_text="First line (1-based) of a partial read."
    )
    end_line = serializers.IntegerField(
        required=False, max_value=2**31, help_text="Last line (inclusive); clamped to the end."
    )


class WithinItemSearchQuerySerializer(serializers.Serializer):
    q = text(help_text="Literal text to find (not a regex); may span lines.")
    fields = serializers.CharField(
        required=False,
        default="content",
        help_text="Comma list of content,title,description.",
    )
    case_sensitive = serializers.BooleanField(required=False, default=False)
    context_lines = serializers.IntegerField(required=False, default=2, min_value=0, max_value=10)


SORT_CHOICES = ["created_at", "updated_at", "last_used_at", "title", "relevance"]


class ListQuerySerializer(serializers.Serializer):
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=500,  # SPEC §3.3: full-text cost grows faster than linearly with length
        help_text='Search. PostgreSQL: full-text (websearch syntax: "phrase", OR, -word; '
        "stemmed) or substring. SQLite: substring.",
    )
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    tag_match = serializers.ChoiceField(choices=["all", "any"], required=False, default="all")
    view = serializers.ListField(
        child=serializers.ChoiceField(choices=ItemState.values), required=False
    )
    sort_by = serializers.ChoiceField(choices=SORT_CHOICES, required=False)
    sort_order = serializers.ChoiceField(choices=["asc", "desc"], required=False, default="desc")
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=100)
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=10**9)


class ContentListQuerySerializer(ListQuerySerializer):
    type = serializers.ListField(
        child=serializers.ChoiceField(choices=["bookmark", "note", "prompt"]), required=False
    )


class NoBodySerializer(StrictSerializer):
    """Lifecycle actions take no body; anything but nothing or ``{}`` is a mistake worth a 400."""


class RenderSerializer(StrictSerializer):
    arguments = serializers.DictField(
        child=serializers.JSONField(),
        required=False,
        default=dict,
        help_text="Values for the template's arguments (any JSON).",
    )


class TagRenameSerializer(StrictSerializer):
    name = StringField(help_text="The new tag name.")


# --- responses ----------------------------------------------------------------------------------


class ContentMetadataSerializer(serializers.Serializer):
    total_lines = serializers.IntegerField()
    start_line = serializers.IntegerField()
    end_line = serializers.IntegerField()
    is_partial = serializers.BooleanField()


class ItemBaseOut(serializers.Serializer):
    id = serializers.UUIDField()
    type = serializers.CharField()
    title = serializers.CharField(allow_null=True)
    description = serializers.CharField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())
    state = serializers.ChoiceField(choices=ItemState.values)
    content_length = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField()
    archived_at = serializers.DateTimeField(allow_null=True)
    deleted_at = serializers.DateTimeField(allow_null=True)


class ArgumentOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    required = serializers.BooleanField()


class _Full(ItemBaseOut):
    content = serializers.CharField(allow_null=True)
    content_metadata = ContentMetadataSerializer(allow_null=True)


class _Listed(ItemBaseOut):
    content_preview = serializers.CharField(allow_null=True)


class NoteOut(_Full):
    pass


class BookmarkOut(_Full):
    url = serializers.CharField()


class PromptOut(_Full):
    name = serializers.CharField()
    arguments = ArgumentOut(many=True)


class NoteListItem(_Listed):
    pass


class BookmarkListItem(_Listed):
    url = serializers.CharField()


class PromptListItem(_Listed):
    name = serializers.CharField()
    arguments = ArgumentOut(many=True)


class ContentListItem(_Listed):
    url = serializers.CharField(required=False)
    name = serializers.CharField(required=False)
    arguments = ArgumentOut(many=True, required=False)


def page_serializer(item: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    return type(
        name,
        (serializers.Serializer,),
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item(many=True),
        },
    )


class StrReplaceOut(serializers.Serializer):
    match_type = serializers.ChoiceField(
        choices=["exact", "whitespace_normalized", "indentation_relative"]
    )
    line = serializers.IntegerField(help_text="1-based line where the replaced text starts.")
    id = serializers.UUIDField()
    updated_at = serializers.DateTimeField()
    item = serializers.DictField(required=False, help_text="With include_updated_entity=true.")


class WithinItemMatchOut(serializers.Serializer):
    field = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)
    context = serializers.CharField()


class WithinItemSearchOut(serializers.Serializer):
    matches = WithinItemMatchOut(many=True)
    total_matches = serializers.IntegerField()
    truncated = serializers.BooleanField(
        required=False,
        help_text="Present (true) when more than TIDDLY_SEARCH_MAX_MATCHES (default 10 000) "
        "matched: only the first ones are listed; total_matches is exact.",
    )


class RenderOut(serializers.Serializer):
    rendered = serializers.CharField()


class TagOut(serializers.Serializer):
    name = serializers.CharField()
    count = serializers.IntegerField(help_text="Active items carrying the tag.")


class ErrorOut(serializers.Serializer):
    error = serializers.CharField(help_text="Stable machine code, e.g. no_match.")
    message = serializers.CharField(help_text="What went wrong and how to fix the request.")
    fields = serializers.DictField(required=False)
    suggestion = serializers.CharField(required=False)
    matches = WithinItemMatchOut(many=True, required=False)
    total_matches = serializers.IntegerField(required=False)
    server_state = serializers.DictField(required=False)
    existing_id = serializers.UUIDField(required=False)
    field = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False)


# --- turning items into JSON (fast, by hand: this runs on every response) ----------------------


def _dt(value: Any) -> str | None:
    if value is None:
        return None
    text_value = value.isoformat()
    return text_value[:-6] + "Z" if text_value.endswith("+00:00") else text_value


def _base(item: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": str(item.pk),
        "type": item.type_name,
        "title": item.title,
        "description": item.description,
        "tags": item.tag_names(),
        "state": item.state,
        "created_at": _dt(item.created_at),
        "updated_at": _dt(item.updated_at),
        "last_used_at": _dt(item.last_used_at),
        "archived_at": _dt(item.archived_at),
        "deleted_at": _dt(item.deleted_at),
    }
    if item.type_name == "bookmark":
        data["url"] = item.url
    elif item.type_name == "prompt":
        data["name"] = item.name
        data["arguments"] = item.arguments
    return data


def item_data(item: Any, *, window: Any = None) -> dict[str, Any]:
    """The full item. ``window`` (a LineWindow) cuts ``content`` for a partial read."""
    data = _base(item)
    content = item.content
    data["content_length"] = None if content is None else len(content)
    if window is not None:
        data["content"] = window.content
        data["content_metadata"] = {
            "total_lines": window.total_lines,
            "start_line": window.start_line,
            "end_line": window.end_line,
            "is_partial": window.is_partial,
        }
    else:
        data["content"] = content
        data["content_metadata"] = None if content is None else _whole(content)
    return data


def _whole(content: str) -> dict[str, Any]:
    total = count_lines(content)
    return {"total_lines": total, "start_line": 1, "end_line": total, "is_partial": False}


def listed_item_data(item: Any) -> dict[str, Any]:
    """A list entry: no content, but its length and a whitespace-collapsed preview."""
    data = _base(item)
    head = getattr(item, "content_head", None)
    data["content_length"] = getattr(item, "content_length", None)
    data["content_preview"] = preview(head)
    return data


def preview(content: str | None) -> str | None:
    """The first 500 characters with whitespace runs collapsed (lists, MCP metadata)."""
    if content is None:
        return None
    return _WHITESPACE.sub(" ", content[:PREVIEW_CHARS]).strip()


register_item_serializer(item_data)
