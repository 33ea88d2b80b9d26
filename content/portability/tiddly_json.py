"""Tiddly's own export format (SPEC §14), version 1: a streaming writer and a validating reader.

    {"format": "tiddly", "version": 1, "exported_at": "2025-01-31T12:00:00Z",
     "items": [{"type", "id", "title", "description", "content", "tags", "url"?, "name"?,
                "arguments"?, "created_at", "updated_at", "last_used_at", "archived_at",
                "deleted_at"}, …],
     "filters": [{id, name, content_types, expression, default_sort_by, default_sort_order,
                  created_at, updated_at}, …],
     "relationships": [{id, source_type, source_id, target_type, target_id, description,
                        created_at}, …]}

Dates are ISO 8601 in UTC (``Z``) or null; each item also carries its type's own fields (the
model's ``extra_fields``: ``url`` on bookmarks, ``name`` and ``arguments`` on prompts).
``filters`` and ``relationships`` are in their REST shapes (SPEC §11/§12); a relationship's ends
name items of the same file by their ``id``, which the importer maps to the items it creates.

Reading takes the known types and their own fields (``type_fields``) from the caller, so this
module knows no item type. Structural problems (not JSON, not an object, wrong ``format``, unsupported ``version``,
``items`` not a list) are ``InvalidImport`` with a line/column or a JSONPath; a bad entry (wrong
type, a non-date ``created_at``, …) is skipped with its reason and does not stop the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from django.utils.dateparse import parse_datetime

from content.models import Item
from content.portability.errors import InvalidImport
from content.portability.records import ImportRecord, ImportSkip
from content.shapes import ExportItem, export_item, iso

FORMAT = "tiddly"
VERSION = 1
TEXT_FIELDS = ("title", "description", "content")
DATE_FIELDS = ("created_at", "updated_at", "last_used_at", "archived_at", "deleted_at")
LATER_SECTIONS = ("filters", "relationships")
# Each item type's own fields, by type name.
TypeFields = Mapping[str, Sequence[str]]


def item_record(item: Item) -> ExportItem:
    """One item as it appears in ``items`` (tags must be prefetched to keep this query-free)."""
    return export_item(item, with_content=True)


def write_tiddly_json(
    items: Iterable[Any],
    *,
    exported_at: datetime,
    filters: Iterable[Mapping[str, Any]] = (),
    relationships: Iterable[Mapping[str, Any]] = (),
) -> Iterator[str]:
    """The document as ``str`` chunks: one per entry, so memory stays flat whatever the count."""
    yield (
        f'{{"format": "{FORMAT}", "version": {VERSION}, '
        f'"exported_at": "{iso(exported_at)}", "items": ['
    )
    separator = "\n"
    for item in items:
        yield separator + json.dumps(item_record(item), ensure_ascii=False)
        separator = ",\n"
    for name, entries in (("filters", filters), ("relationships", relationships)):
        yield f'\n], "{name}": ['
        separator = "\n"
        for entry in entries:
            yield separator + json.dumps(entry, ensure_ascii=False)
            separator = ",\n"
    yield "\n]}\n"


# --- reading ------------------------------------------------------------------------------------


class TiddlyDocument:
    """A parsed, structurally valid Tiddly JSON file; ``records()`` converts entry by entry."""

    def __init__(
        self,
        items: list[Any],
        warnings: list[str],
        type_fields: TypeFields,
        sections: dict[str, list[Any]] | None = None,
    ) -> None:
        self._items = items
        self.warnings = warnings
        self._type_fields = type_fields
        sections = sections or {}
        self.filters: list[Any] = sections.get("filters", [])
        self.relationships: list[Any] = sections.get("relationships", [])

    def __len__(self) -> int:
        return len(self._items)

    def records(self) -> Iterator[ImportRecord | ImportSkip]:
        for index in range(len(self._items)):
            raw, self._items[index] = self._items[index], None  # free entries as we go
            yield entry_record(index, raw, self._type_fields)


def read_tiddly_json(data: bytes, *, type_fields: TypeFields) -> TiddlyDocument:
    """Parse and check the document's structure; ``type_fields`` maps each known item type to
    its own fields (e.g. ``{"bookmark": ("url",), "note": ()}``)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InvalidImport("The file is not UTF-8 text", line=line, column=column) from None
    lone = _lone_surrogate(text)
    if lone is not None:
        line = text.count("\n", 0, lone) + 1
        column = lone - (text.rfind("\n", 0, lone) + 1) + 1
        raise InvalidImport(
            f"The file holds a lone surrogate escape ({text[lone : lone + 6]}), which is not a "
            "character: fix or remove it",
            line=line,
            column=column,
        )
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InvalidImport(
            f"The file is not valid JSON: {exc.msg}", line=exc.lineno, column=exc.colno
        ) from None
    except (RecursionError, ValueError) as exc:
        raise InvalidImport(f"The file is not valid JSON: {exc}") from None
    return _validated(document, type_fields)


# A \\uXXXX escape of a UTF-16 surrogate, preceded by an even number of backslashes (an odd
# number would make it literal text).
SURROGATE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u([dD][89a-fA-F][0-9a-fA-F]{2})")


def _lone_surrogate(text: str) -> int | None:
    """The offset of the first surrogate escape that is not half of a pair, else None. JSON
    allows them, Python decodes them, but no database or encoder can store one (SPEC §14)."""
    paired_low = -1
    for match in SURROGATE_ESCAPE.finditer(text):
        start = match.start(1) - 2
        if start == paired_low:
            continue
        if match.group(1)[1].lower() in "89ab":  # a high surrogate: a low one must follow
            after = text[match.end() : match.end() + 6]
            if len(after) == 6 and after[:3].lower() == "\\ud" and after[3].lower() in "cdef":
                paired_low = match.end()
                continue
        return start
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _validated(document: Any, type_fields: TypeFields) -> TiddlyDocument:
    if not isinstance(document, dict):
        raise InvalidImport("A Tiddly export is a JSON object", path="$")
    if document.get("format") != FORMAT:
        raise InvalidImport(
            f'This JSON is not a Tiddly export: "format" must be "{FORMAT}". To import browser '
            "bookmarks, upload their HTML export",
            path="$.format",
        )
    if document.get("version") != VERSION:
        raise InvalidImport(
            f"Unsupported Tiddly export version {document.get('version')!r}: this server reads "
            f"version {VERSION}",
            path="$.version",
        )
    items = document.get("items")
    if not isinstance(items, list):
        raise InvalidImport('"items" must be a list of items', path="$.items")
    sections: dict[str, list[Any]] = {}
    for section in LATER_SECTIONS:
        value = document.get(section, [])
        if not isinstance(value, list):
            raise InvalidImport(f'"{section}" must be a list', path=f"$.{section}")
        sections[section] = value
    return TiddlyDocument(items, [], type_fields, sections)


def entry_record(index: int, raw: Any, type_fields: TypeFields) -> ImportRecord | ImportSkip:
    """Check one entry's shape and convert it; a wrong shape is a skip with the reason."""
    if not isinstance(raw, dict):
        return ImportSkip(index, "The entry is not a JSON object.")
    title = raw.get("title") if isinstance(raw.get("title"), str) else None
    url = raw.get("url") if isinstance(raw.get("url"), str) else None
    problem = _shape_problem(raw, type_fields)
    if problem:
        return ImportSkip(index, problem, title, url)
    values: dict[str, Any] = {name: raw.get(name) for name in TEXT_FIELDS}
    for name in DATE_FIELDS:
        values[name] = _date(raw.get(name))
    own = type_fields[raw["type"]]
    return ImportRecord(
        index=index,
        type=raw["type"],
        tags=list(raw.get("tags") or []),
        type_fields={name: raw[name] for name in own if name in raw},
        source_id=raw["id"] if isinstance(raw.get("id"), str) else None,
        present=frozenset(raw),
        **values,
    )


def _shape_problem(raw: dict[str, Any], type_fields: TypeFields) -> str | None:
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in type_fields:
        return f"Unknown type {kind!r}: expected one of {', '.join(type_fields)}."
    for name in TEXT_FIELDS:
        if raw.get(name) is not None and not isinstance(raw[name], str):
            return f"{name} must be a string or null."
    tags = raw.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        return "tags must be a list of strings."
    for name in DATE_FIELDS:
        value = raw.get(name)
        if value is not None and (not isinstance(value, str) or _date(value) is None):
            return f"{name} must be an ISO 8601 date-time (e.g. 2025-01-31T12:00:00Z) or null."
    return None


def _date(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = parse_datetime(value)
    except ValueError:
        return None
    if parsed is not None and parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed
