"""The export use-case: an owner's items as a streamed Tiddly JSON, Netscape or Markdown file."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import reduce
from itertools import islice
from operator import or_
from typing import Any

from django.db.models import Q
from django.utils import timezone

from content.models import Bookmark, Item, ItemState, Note, state_q
from content.portability.markdown import write_markdown_zip
from content.portability.netscape import write_netscape
from content.portability.tiddly_json import write_tiddly_json
from prompts.models import Prompt
from tiddly.errors import ValidationFailed

MODELS: dict[str, type[Item]] = {"bookmark": Bookmark, "note": Note, "prompt": Prompt}
FORMATS = ("json", "netscape", "markdown")
FORMAT_TYPES = {
    "json": ("bookmark", "note", "prompt"),
    "netscape": ("bookmark",),
    "markdown": ("note", "prompt"),
}
DEFAULT_VIEWS = (ItemState.ACTIVE, ItemState.ARCHIVED)
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


@dataclass(frozen=True)
class ExportFile:
    filename: str
    content_type: str
    chunks: Iterator[bytes]


def export_items(
    *,
    owner: Any,
    format: str = "json",
    types: Sequence[str] | None = None,
    views: Sequence[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> ExportFile:
    """The owner's items of ``types`` in ``views`` (default: all but trash) as a lazy file.

    Nothing is read until ``chunks`` is iterated; then items come from the database a chunk at a
    time, oldest first, with their tags prefetched per chunk. ``progress(n)`` is called as items
    are written. Asking for types the format cannot hold (``netscape`` + notes) is a 400.
    """
    chosen = _types(format, types)
    items = _items(owner, chosen, list(views or DEFAULT_VIEWS), progress)
    now = timezone.now()
    writers: dict[str, Callable[[], Iterable[str | bytes]]] = {
        "json": lambda: write_tiddly_json(items, exported_at=now),
        "netscape": lambda: write_netscape(items),  # type: ignore[arg-type]
        "markdown": lambda: write_markdown_zip(items),
    }
    name = f"tiddly-export-{now:%Y%m%d-%H%M%S}.{EXTENSIONS[format]}"
    return ExportFile(name, CONTENT_TYPES[format], _buffered(writers[format]()))


def count_items(
    *, owner: Any, format: str, types: Sequence[str] | None, views: Sequence[str] | None
) -> int:
    chosen = _types(format, types)
    condition = _views_q(list(views or DEFAULT_VIEWS))
    return sum(MODELS[t].objects.filter(condition, owner=owner).count() for t in chosen)


def _types(format: str, types: Sequence[str] | None) -> list[str]:
    if format not in FORMATS:
        raise ValidationFailed({"format": [f"Choose one of: {', '.join(FORMATS)}."]})
    allowed = FORMAT_TYPES[format]
    if not types:
        return list(allowed)
    chosen = [t for t in dict.fromkeys(types) if t in allowed]
    if not chosen:
        raise ValidationFailed(
            {"type": [f"The {format} format holds only {', '.join(allowed)} items."]}
        )
    return chosen


def _views_q(views: list[str]) -> Q:
    now = timezone.now()
    return reduce(or_, (state_q(view, now) for view in dict.fromkeys(views)))


def _items(
    owner: Any, types: list[str], views: list[str], progress: Callable[[int], None] | None
) -> Iterator[Item]:
    condition = _views_q(views)
    for kind in types:
        model = MODELS[kind]
        rows = model.objects.filter(condition, owner=owner).order_by("created_at", "id")
        iterator = rows.iterator(chunk_size=CHUNK_SIZE)
        while chunk := list(islice(iterator, CHUNK_SIZE)):
            _attach_tag_names(model, chunk)
            yield from chunk
            if progress is not None:
                progress(len(chunk))


def _attach_tag_names(model: type[Item], chunk: list[Item]) -> None:
    """One query for the chunk's tag names, without building Tag instances and managers
    (``prefetch_related`` cost more than the rest of the export together)."""
    relation = model._meta.get_field("tags")
    through = relation.remote_field.through  # type: ignore[union-attr]
    source = f"{relation.m2m_field_name()}_id"  # type: ignore[union-attr]
    target = relation.m2m_reverse_field_name()  # type: ignore[union-attr]
    names: dict[Any, list[str]] = {item.pk: [] for item in chunk}
    links = through.objects.filter(**{f"{source}__in": list(names)})
    for pk, name in links.values_list(source, f"{target}__name"):
        names[pk].append(name)
    for item in chunk:
        item.tag_names = sorted(names[item.pk]).copy  # type: ignore[method-assign]


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
