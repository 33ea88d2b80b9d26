"""Request validation and response shapes for the item API (and the MCP bridge's results).

Input serializers only check types and shape — and reject unknown fields, so a typo in a field
name is an error rather than a silent no-op. Limits, normalisation and uniqueness are the
services' job, so REST, admin and MCP enforce them identically.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from content import item_types
from content.models import ItemState
from content.text.replace import MAX_EDITS
from tiddly.serializers import (
    JSONBooleanField,
    QueryChoiceField,
    StrictSerializer,
    StringField,
    off_unless,
    optional_text,
    rename_fields,
    text,
)

__all__ = ["StrictSerializer", "StringField", "optional_text", "text"]


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
    capture = JSONBooleanField(
        required=False,
        help_text="false: do not fetch the page. Default: a bookmark created without content is "
        "captured in the background (capture.status pending, then done/failed/skipped).",
    )
    page_html = StringField(
        required=False,
        help_text="The page as the browser rendered it (at most 5 000 000 characters): its text "
        "is extracted at once and nothing is fetched (pages behind a login).",
    )


class CaptureRequestSerializer(StrictSerializer):
    replace_content = off_unless(
        "true: replace the current content with the page's text (unless it is "
        "edited after this request). Default: fill content only when it is empty."
    )


class PreviewQuerySerializer(serializers.Serializer):
    url = StringField(help_text="The http(s) URL to preview.")


class PreviewOut(serializers.Serializer):
    url = serializers.CharField()
    final_url = serializers.CharField()
    title = serializers.CharField(allow_null=True)
    description = serializers.CharField(allow_null=True)
    content_type = serializers.CharField(allow_null=True)


class CaptureOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=["pending", "done", "failed", "skipped"])
    requested_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    attempts = serializers.IntegerField()
    http_status = serializers.IntegerField(allow_null=True)
    content_type = serializers.CharField(allow_null=True)
    final_url = serializers.CharField(allow_null=True)
    error = serializers.CharField(
        allow_null=True,
        help_text="Why it failed or was skipped; starts with refused:, timed out, HTTP <status>, "
        "unsupported content type, too many redirects, too large, connection failed:.",
    )


class BookmarkUpdateSerializer(ItemWriteSerializer, UpdateMixin):
    url = StringField(required=False, allow_null=True)


class EditSerializer(StrictSerializer):
    old_str = text(help_text="Text to find in the ORIGINAL content (before any of the edits).")
    new_str = text(allow_blank=True, help_text="Replacement text; empty deletes old_str.")
    replace_all = JSONBooleanField(
        required=False, default=False, help_text="Replace every match instead of exactly one."
    )


class StrReplaceSerializer(StrictSerializer):
    """One edit (``old_str``/``new_str``/``replace_all``) or several (``edits``), not both."""

    old_str = text(
        required=False,
        help_text="Text to find; must match exactly one place (unless replace_all). Include "
        "surrounding lines to make it unique. Required unless `edits` is given.",
    )
    new_str = text(
        required=False,
        allow_blank=True,
        help_text="Replacement text; empty deletes old_str. Required with old_str.",
    )
    replace_all = off_unless(
        "Replace every non-overlapping match (at the first matching level) instead of "
        "failing with multiple_matches; the answer adds `replacements`."
    )
    edits = serializers.ListField(
        child=EditSerializer(),
        required=False,
        min_length=1,
        max_length=MAX_EDITS,
        help_text=f"1-{MAX_EDITS} edits applied together instead of old_str/new_str: each is "
        "matched against the original content, matches must not overlap, all-or-nothing, one "
        "history version.",
    )
    dry_run = off_unless(
        "Make every check and write nothing; the answer carries the unified `diff`."
    )
    expected_updated_at = serializers.DateTimeField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "edits" in attrs:
            both = sorted({"old_str", "new_str"} & set(attrs))
            if attrs.get("replace_all"):
                both.append("replace_all")
            if both:
                raise serializers.ValidationError(
                    {
                        name: ["Not allowed with edits: put every change into edits."]
                        for name in both
                    }
                )
            return attrs
        missing = [name for name in ("old_str", "new_str") if name not in attrs]
        if missing:
            raise serializers.ValidationError(
                {
                    name: ["This field is required (or send edits instead of old_str/new_str)."]
                    for name in missing
                }
            )
        return attrs


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


@rename_fields(fields_="fields")
class WithinItemSearchQuerySerializer(serializers.Serializer):
    q = text(help_text="Literal text to find (not a regex); may span lines.")
    fields_ = serializers.CharField(
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
    tag_match = QueryChoiceField(choices=["all", "any"], required=False, default="all")
    view = serializers.ListField(
        child=serializers.ChoiceField(choices=ItemState.values), required=False
    )
    sort_by = QueryChoiceField(choices=SORT_CHOICES, required=False)
    sort_order = QueryChoiceField(choices=["asc", "desc"], required=False, default="desc")
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=100)
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=10**9)
    filter_id = serializers.UUIDField(
        required=False,
        help_text="A saved filter's id (GET /api/filters/): AND with the other parameters; its "
        "types narrow the list and its sort applies unless sort_by is given.",
    )


class ContentListQuerySerializer(ListQuerySerializer):
    type = serializers.ListField(
        child=serializers.ChoiceField(choices=item_types.type_names()), required=False
    )


class DeleteQuerySerializer(serializers.Serializer):
    permanent = serializers.BooleanField(
        required=False, default=False, help_text="Delete for good, with its history."
    )


class TagListQuerySerializer(serializers.Serializer):
    include_inactive = serializers.BooleanField(
        required=False, default=False, help_text="Include tags with no active items."
    )


class NoBodySerializer(StrictSerializer):
    """Lifecycle actions take no body; anything but nothing or ``{}`` is a mistake worth a 400."""


class TagRenameSerializer(StrictSerializer):
    name = StringField(help_text="The new tag name.")


# --- responses ----------------------------------------------------------------------------------


class ContentMetadataSerializer(serializers.Serializer):
    total_lines = serializers.IntegerField()
    start_line = serializers.IntegerField()
    end_line = serializers.IntegerField()
    is_partial = serializers.BooleanField()


class ShareLinkOut(serializers.Serializer):
    url = serializers.URLField(help_text="The public page; append .md for the raw Markdown.")
    created_at = serializers.DateTimeField()


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
    share = ShareLinkOut(
        allow_null=True,
        help_text="The item's public share link (POST …/share/), or null when not shared.",
    )


class RelatedItemOut(serializers.Serializer):
    relationship_id = serializers.UUIDField()
    type = serializers.CharField()
    id = serializers.UUIDField()
    title = serializers.CharField(
        allow_null=True, help_text="The title, else a bookmark's url or a prompt's name."
    )
    description = serializers.CharField(allow_null=True, help_text="The link's description.")


class FullItemOut(ItemBaseOut):
    content = serializers.CharField(allow_null=True)
    content_metadata = ContentMetadataSerializer(allow_null=True)
    relationships = RelatedItemOut(
        many=True,
        required=False,
        help_text="On GET: the items linked to this one (SPEC §12), items in the trash left out.",
    )


class ListedItemOut(ItemBaseOut):
    content_preview = serializers.CharField(allow_null=True)


class NoteOut(FullItemOut):
    pass


class BookmarkOut(FullItemOut):
    url = serializers.CharField()
    capture = CaptureOut(allow_null=True, help_text="null: never captured (SPEC §15).")


class NoteListItem(ListedItemOut):
    pass


class BookmarkListItem(ListedItemOut):
    url = serializers.CharField()
    capture = CaptureOut(allow_null=True)


class ContentListItem(ListedItemOut):
    """An entry of the cross-type list: the common fields plus the type's own (see ``type``)."""

    url = serializers.CharField(required=False, help_text="Bookmarks.")
    capture = CaptureOut(required=False, allow_null=True, help_text="Bookmarks.")
    name = serializers.CharField(required=False, help_text="Prompts.")
    arguments = serializers.ListField(
        child=serializers.DictField(), required=False, help_text="Prompts."
    )


def page_serializer(item: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """A list's 200 body: one page object (``many=False`` stops drf-spectacular from declaring
    the list action's response as an array of pages)."""
    page = type(
        name,
        (serializers.Serializer,),
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item(many=True),
        },
    )
    return extend_schema_serializer(many=False)(page)


MATCH_TYPES = ["exact", "whitespace_normalized", "indentation_relative"]


class EditResultOut(serializers.Serializer):
    match_type = serializers.ChoiceField(choices=MATCH_TYPES)
    line = serializers.IntegerField(help_text="1-based line where the edit's first match starts.")
    replacements = serializers.IntegerField(help_text="Matches replaced (1 unless replace_all).")


class StrReplaceOut(serializers.Serializer):
    match_type = serializers.ChoiceField(
        choices=MATCH_TYPES, required=False, help_text="Single edit (old_str/new_str)."
    )
    line = serializers.IntegerField(
        required=False, help_text="Single edit: 1-based line where the replaced text starts."
    )
    replacements = serializers.IntegerField(
        required=False, help_text="With replace_all: how many matches were replaced."
    )
    edits = EditResultOut(
        many=True, required=False, help_text="With edits: one result per edit, in request order."
    )
    id = serializers.UUIDField()
    updated_at = serializers.DateTimeField(help_text="Unchanged by a dry run.")
    dry_run = serializers.BooleanField(required=False, help_text="Present (true) on dry runs.")
    diff = serializers.CharField(
        required=False,
        help_text="Dry runs: unified diff of the change (3 context lines, at most 20 000 "
        "characters; empty when nothing would change).",
    )
    diff_truncated = serializers.BooleanField(
        required=False, help_text="Dry runs: true when the diff was cut at 20 000 characters."
    )
    item = serializers.DictField(required=False, help_text="With include_updated_entity=true.")


@rename_fields(context_="context")
class WithinItemMatchOut(serializers.Serializer):
    field = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)
    context_ = serializers.CharField()


class WithinItemSearchOut(serializers.Serializer):
    matches = WithinItemMatchOut(many=True)
    total_matches = serializers.IntegerField()
    truncated = serializers.BooleanField(
        required=False,
        help_text="Present (true) when more than TIDDLY_SEARCH_MAX_MATCHES (default 10 000) "
        "matched: only the first ones are listed; total_matches is exact.",
    )


class TagOut(serializers.Serializer):
    name = serializers.CharField()
    count = serializers.IntegerField(help_text="Active items carrying the tag.")
