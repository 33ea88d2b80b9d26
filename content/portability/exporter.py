"""The export use-case: an owner's items as a streamed Tiddly JSON, Netscape or Markdown file."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import reduce
from itertools import islice
from operator import or_
from typing import Any, cast

from django.db.models import Q
from django.utils import timezone

from content import item_types, queries
from content.models import Bookmark, Item, ItemState, Relationship, state_q
from content.portability.markdown import write_markdown_zip
from content.portability.netscape import NetscapeBookmark, write_netscape
from content.portability.tiddly_json import write_tiddly_json
from content.queries import Owner
from content.queries.lists import attach_tags
from content.services import relationships
from content.shapes import Link, SavedFilter
from tiddly.errors import ValidationFailed

DEFAULT_VIEWS = (ItemState.ACTIVE, ItemState.ARCHIVED)
Progress = Callable[[int], object]
# Rows fetched (and their tags, in one more query) per round trip. Items may carry megabytes of content, so
# this bounds memory too: a chunk is dropped before the next one is read.
CHUNK_SIZE = 500
# Small pieces (one per item) are joined into writes of about this size.
WRITE_BYTES = 64 * 1024
EXTENSIONS = {"json": "json", "netscape": "html", "markdown": "zip"}
CONTENT_TYPES = {
    "json": "application/json",
    "netscape": "text/html; charset=utf-8",
    "markdown": "application/zip",
}


# Which item types each format holds: JSON every type, Netscape bookmarks, Markdown the types
# whose content is their main payload (``markdown_export``: notes and prompts).
HOLDS: dict[str, Callable[[type[Item]], bool]] = {
    "json": lambda model: True,
    "netscape": lambda model: issubclass(model, Bookmark),
    "markdown": lambda model: model.markdown_export,
}


def format_types(format: str) -> list[str]:
    return [name for name, model in item_types.registry().items() if HOLDS[format](model)]


FORMATS = tuple(HOLDS)


@dataclass(frozen=True)
class ExportFile:
    filename: str
    content_type: str
    chunks: Iterator[bytes]


def export_items(
    *,
    owner: Owner,
    format: str = "json",
    types: Sequence[str] | None = None,
    views: Sequence[str] | None = None,
    ids: Collection[Any] | None = None,
    progress: Progress | None = None,
) -> ExportFile:
    """The owner's items of ``types`` in ``views`` (default: all but trash) as a lazy file.

    ``ids`` narrows the export to those items (the admin's "Export selected"). Nothing is read
    until ``chunks`` is iterated; then items come from the database a chunk at a time, oldest
    first, with their tags fetched per chunk. ``progress(n)`` is called as items are written.
    Asking for types the format cannot hold (``netscape`` + notes) is a 400.
    """
    chosen = _types(format, types)
    if format == "markdown" and not _any_items(owner, chosen, list(views or DEFAULT_VIEWS), ids):
        raise ValidationFailed(
            {
                "format": [
                    "The markdown format holds notes and prompts only, and this selection has "
                    "none: the zip would be empty. Export bookmarks with format=json or "
                    "format=netscape."
                ]
            }
        )
    items = _items(owner, chosen, list(views or DEFAULT_VIEWS), ids, progress)
    now = timezone.now()
    writers: dict[str, Callable[[], Iterable[str | bytes]]] = {
        "json": lambda: write_tiddly_json(
            items,
            exported_at=now,
            filters=_filters(owner, chosen) if ids is None else (),
            relationships=_links(owner, chosen, ids),
        ),
        "netscape": lambda: write_netscape(cast(Iterator[NetscapeBookmark], items)),
        "markdown": lambda: write_markdown_zip(items),
    }
    name = f"tiddly-export-{now:%Y%m%d-%H%M%S}.{EXTENSIONS[format]}"
    return ExportFile(name, CONTENT_TYPES[format], _buffered(writers[format]()))


def _filters(owner: Owner, types: list[str]) -> Iterator[SavedFilter]:
    """The owner's saved filters that show any exported type, in their REST shape."""
    for saved in queries.filters_for_types(owner, types):
        yield queries.filter_data(saved)


def _links(owner: Owner, types: list[str], ids: Collection[Any] | None) -> Iterator[Link]:
    """Links whose two ends are of exported types (and, for a selection, selected items)."""
    links = Relationship.objects.filter(
        owner=owner, source_type__in=types, target_type__in=types
    ).order_by("created_at", "id")
    if ids is not None:
        links = links.filter(source_id__in=ids, target_id__in=ids)
    for link in links.iterator(chunk_size=CHUNK_SIZE):
        yield relationships.link_data(link)


def count_items(
    *, owner: Owner, format: str, types: Sequence[str] | None, views: Sequence[str] | None
) -> int:
    chosen = _types(format, types)
    condition = _views_q(list(views or DEFAULT_VIEWS))
    registry = item_types.registry()
    return sum(registry[t].objects.filter(condition, owner=owner).count() for t in chosen)


def _types(format: str, types: Sequence[str] | None) -> list[str]:
    if format not in FORMATS:
        raise ValidationFailed({"format": [f"Choose one of: {', '.join(FORMATS)}."]})
    allowed = format_types(format)
    if not types:
        return list(allowed)
    chosen = [t for t in dict.fromkeys(types) if t in allowed]
    if not chosen:
        raise ValidationFailed(
            {"type": [f"The {format} format holds only {', '.join(allowed)} items."]}
        )
    return chosen


def _any_items(
    owner: Owner, types: list[str], views: list[str], ids: Collection[Any] | None
) -> bool:
    registry = item_types.registry()
    condition = _views_q(views)
    for kind in types:
        found = registry[kind].objects.filter(condition, owner=owner)
        if ids is not None:
            found = found.filter(pk__in=ids)
        if found.exists():
            return True
    return False


def _views_q(views: list[str]) -> Q:
    now = timezone.now()
    return reduce(or_, (state_q(view, now) for view in dict.fromkeys(views)))


def _items(
    owner: Owner,
    types: list[str],
    views: list[str],
    ids: Collection[Any] | None,
    progress: Progress | None,
) -> Iterator[Item]:
    condition = _views_q(views)
    if ids is not None:
        condition &= Q(pk__in=ids)
    for kind in types:
        model = item_types.registry()[kind]
        rows = model.objects.filter(condition, owner=owner).order_by("created_at", "id")
        iterator = rows.iterator(chunk_size=CHUNK_SIZE)
        while chunk := list(islice(iterator, CHUNK_SIZE)):
            attach_tags(model, chunk)  # one query, no Tag instances or managers
            yield from chunk
            if progress is not None:
                progress(len(chunk))


def _buffered(pieces: Iterable[str | bytes]) -> Iterator[bytes]:
    buffer: list[bytes] = []
    size = 0
    for piece in pieces:
        data = piece.encode() if isinstance(piece, str) else piece
        buffer.append(data)
        size += len(data)
        if size >= WRITE_BYTES:
            yield b"".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield b"".join(buffer)
