"""Strict DRF fields and the error envelope's OpenAPI shape, shared by every app's API.

Input serializers only check types and shape — and reject unknown fields, so a typo in a field
name is an error rather than a silent no-op.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

_S = TypeVar("_S", bound=type[serializers.Serializer])


def rename_fields(**names: str) -> Callable[[_S], _S]:
    """Give declared fields a name DRF's own ``Serializer``/``Field`` attributes already use.

    A field called ``fields``, ``context``, ``source`` or ``required`` cannot be declared under that
    name: it would shadow (for the type checker) the serializer's attribute of the same name. Declare
    it with a trailing underscore and rename it here; the order of the fields is kept::

        @rename_fields(fields_="fields")
        class ErrorOut(serializers.Serializer):
            fields_ = serializers.DictField(required=False)
    """

    def decorate(cls: _S) -> _S:
        declared = cls._declared_fields
        missing = sorted(set(names) - set(declared))
        if missing:
            raise TypeError(f"{cls.__name__} declares no field {', '.join(missing)}")
        cls._declared_fields = {names.get(k, k): v for k, v in declared.items()}
        return cls

    return decorate


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


def text_problem(value: str, *, allow_nul: bool = False) -> str | None:
    """Why ``value`` cannot be stored or queried as text (NUL, a lone surrogate), or ``None``.

    The same messages as the REST fields', for callers that validate outside a serializer (MCP).
    """
    if not allow_nul and "\x00" in value:
        return "Null characters are not allowed."
    if not value.isascii():
        found = _SURROGATE.search(value)
        if found:
            return f"Surrogate characters are not allowed: U+{ord(found.group()):X}."
    return None


def printable(value: str) -> str:
    """``value`` safe to put in a JSON answer: lone surrogates escaped as ``\\udXXX``."""
    if value.isascii() or not _SURROGATE.search(value):
        return value
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


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
        return super().to_internal_value(data)


class JSONBooleanField(serializers.BooleanField):
    """A JSON ``true``/``false`` only (SPEC §3.4): DRF's would also take 1, "yes" or "on", so a
    typo'd ``"force": "no"`` would silently mean what it does not say."""

    default_error_messages = {"invalid": "Must be a JSON boolean: true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


def off_unless(help_text: str) -> JSONBooleanField:
    """An optional flag, false unless the request says ``true``."""
    return JSONBooleanField(required=False, default=False, help_text=help_text)


class QueryChoiceField(serializers.ChoiceField):
    """An enumerated query parameter whose empty value (``?sort_by=``) is a 400 naming it
    (SPEC §3.4), where DRF would quietly treat it as absent."""

    def get_value(self, dictionary: Any) -> Any:
        if self.field_name in dictionary and dictionary.get(self.field_name) == "":
            return ""
        return super().get_value(dictionary)

    def to_internal_value(self, data: Any) -> Any:
        if data == "":
            choices = ", ".join(str(c) for c in self.choices)
            raise serializers.ValidationError(
                f"Must not be empty: choose one of {choices}, or leave the parameter out."
            )
        return super().to_internal_value(data)


def text(**kwargs: Any) -> serializers.CharField:
    """Text stored verbatim: whitespace is content (an agent's indentation must survive)."""
    return StringField(trim_whitespace=False, **kwargs)


def optional_text(**kwargs: Any) -> serializers.CharField:
    return text(required=False, allow_null=True, allow_blank=True, **kwargs)


def validated(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    """``serializer_class``'s validated data, or a 400 ``validation_error``."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def optional_list(child: serializers.Field, help_text: str, **kwargs: Any) -> serializers.ListField:
    """An optional list: a repeatable query parameter, or a list an answer may carry."""
    return serializers.ListField(child=child, required=False, help_text=help_text, **kwargs)


@rename_fields(fields_="fields")
class ErrorOut(serializers.Serializer):
    """The §3.4 error body every endpoint (and every MCP tool) answers with."""

    error = serializers.CharField(help_text="Stable machine code, e.g. no_match.")
    message = serializers.CharField(help_text="What went wrong and how to fix the request.")
    fields_ = serializers.DictField(required=False)
    suggestion = serializers.CharField(required=False)
    matches = serializers.ListField(child=serializers.DictField(), required=False)
    total_matches = serializers.IntegerField(required=False)
    server_state = serializers.DictField(required=False)
    existing_id = serializers.UUIDField(required=False)
    field = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False)
    length = serializers.IntegerField(required=False)
    match_type = serializers.CharField(required=False)
    edit_index = serializers.IntegerField(
        required=False, help_text="The failing entry of `edits` (0-based)."
    )
    edit_indexes = optional_list(
        serializers.IntegerField(),
        "overlapping_edits: the two edits whose matches overlap (0-based).",
    )
    lines = optional_list(
        serializers.IntegerField(),
        "overlapping_edits: the start lines of the two overlapping matches.",
    )
    filters = optional_list(
        serializers.DictField(),
        "tag_in_use: the saved filters ({id, name}) that use the tag.",
    )
