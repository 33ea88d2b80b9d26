"""Items as MCP resources (SPEC §17.3): the owner's active items, most recently updated first,
a page at a time by keyset cursor, each with the UTF-8 size of its Markdown — computed by the
database, so a page of 50 six-megabyte notes reads no content."""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import F, Func, IntegerField, Q, Value
from django.db.models.functions import Coalesce

from content.models import Item
from content.queries.lists import owned
from content.shapes import markdown_head
from tiddly.errors import NotFound

PAGE_SIZE = 50


class Utf8Bytes(Func):
    """The length of a text column in UTF-8 bytes (``Length`` counts characters)."""

    output_field = IntegerField()
    function = "OCTET_LENGTH"

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, template="LENGTH(CAST(%(expressions)s AS BLOB))")


@dataclass(frozen=True)
class Resource:
    item: Item  # without its content
    size: int  # UTF-8 bytes of the item's Markdown (``raw``: of its content alone)


class BadCursor(ValueError):
    pass


def encode_cursor(item: Item) -> str:
    raw = json.dumps({"u": item.updated_at.isoformat(), "i": str(item.pk)})
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_cursor(cursor: str | None) -> tuple[datetime, str] | None:
    if not cursor:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        moment, pk = datetime.fromisoformat(data["u"]), uuid.UUID(data["i"])
    except (ValueError, TypeError, KeyError, AttributeError, binascii.Error):
        raise BadCursor(cursor) from None
    # Checked here, not by the query: a cursor we did not write must not reach the database
    # (an id that is no UUID would fail there, as an internal error instead of a bad argument).
    if moment.tzinfo is None:
        raise BadCursor(cursor)
    return moment, str(pk)


def resource_page(
    owner: Any, models: list[type[Item]], cursor: str | None, *, raw: bool = False
) -> tuple[list[Resource], str | None]:
    """One page of the owner's active items of ``models``, newest change first, and the cursor
    of the next page (None on the last). ``raw``: sizes of the content alone (prompt templates)."""
    after = decode_cursor(cursor)
    rows: list[Item] = []
    for model in models:
        qs = owned(owner, model).active().defer("content")
        if after is not None:
            moment, pk = after
            qs = qs.filter(Q(updated_at__lt=moment) | Q(updated_at=moment, pk__lt=pk))
        qs = qs.annotate(content_bytes=Coalesce(Utf8Bytes(F("content")), Value(0)))
        rows.extend(qs.order_by("-updated_at", "-pk")[: PAGE_SIZE + 1])
    rows.sort(key=lambda item: (item.updated_at, str(item.pk)), reverse=True)
    page = rows[:PAGE_SIZE]
    found = [Resource(item, _size(item, raw)) for item in page]
    more = len(rows) > PAGE_SIZE
    return found, encode_cursor(page[-1]) if more and page else None


def _size(item: Item, raw: bool) -> int:
    content_bytes = int(getattr(item, "content_bytes", 0))
    return content_bytes if raw else len(markdown_head(item).encode()) + content_bytes


def active_item(owner: Any, model: type[Item], **lookup: Any) -> Item:
    """The owner's active item with its content, or ``NotFound``."""
    item = owned(owner, model).active().filter(**lookup).first()
    if item is None:
        raise NotFound(f"No such {model.type_name} among your active {model.type_name}s.")
    return item
