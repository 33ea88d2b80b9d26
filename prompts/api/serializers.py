"""Request and response shapes of the prompt API: names, argument lists, rendering."""

from __future__ import annotations

from rest_framework import serializers

from content.api.serializers import (
    FullItemOut,
    ItemWriteSerializer,
    ListedItemOut,
    StrReplaceSerializer,
    UpdateMixin,
)
from tiddly.serializers import (
    StrictSerializer,
    StringField,
    optional_text,
    rename_fields,
    text,
)


@rename_fields(required_="required")
class ArgumentSerializer(StrictSerializer):
    name = StringField(help_text="Variable name used in the template: ^[a-z][a-z0-9_]*$")
    description = optional_text(help_text="What the argument is for (shown to agents).")
    required_ = serializers.BooleanField(required=False, default=False)


class PromptCreateSerializer(ItemWriteSerializer):
    name = StringField(help_text="Unique name: ^[a-z0-9]+(-[a-z0-9]+)*$")
    content = text(help_text="The Jinja2 template. Required, non-blank.")
    arguments = ArgumentSerializer(many=True, required=False)


class PromptUpdateSerializer(ItemWriteSerializer, UpdateMixin):
    name = StringField(required=False, allow_null=True, help_text="Rename the prompt.")
    arguments = ArgumentSerializer(
        many=True, required=False, allow_null=True, help_text="Full replacement of the list."
    )


class PromptStrReplaceSerializer(StrReplaceSerializer):
    arguments = ArgumentSerializer(
        many=True,
        required=False,
        allow_null=True,
        help_text="Full replacement of the argument list, applied atomically with the edit.",
    )


class RenderSerializer(StrictSerializer):
    arguments = serializers.DictField(
        child=serializers.JSONField(),
        required=False,
        default=dict,
        help_text="Values for the template's arguments (any JSON).",
    )


@rename_fields(required_="required")
class ArgumentOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    required_ = serializers.BooleanField()


class PromptOut(FullItemOut):
    name = serializers.CharField()
    arguments = ArgumentOut(many=True)


class PromptListItem(ListedItemOut):
    name = serializers.CharField()
    arguments = ArgumentOut(many=True)


class RenderOut(serializers.Serializer):
    rendered = serializers.CharField()
