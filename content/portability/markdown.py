"""Notes and prompts as a zip of Markdown files with YAML front matter, streamed.

The zip is written by the standard library's ``zipfile`` into a write-only sink that the
generator empties after every file: ``zipfile`` sees an unseekable stream and writes each
member's sizes in a data descriptor after its data, so nothing but the current file and the
central directory (a few dozen bytes per member) is ever held in memory — no temporary file.

Layout: one folder per type (``notes/``, ``prompts/``); a file is named after the item's
``name_field`` when its type has one (prompts), else its title, as an ASCII slug unique within
the archive (``-2``, ``-3``… on a clash, the item id when nothing usable is left). Each file is
``---\\n<YAML>---\\n\\n<content>``; the YAML (written with ``yaml.safe_dump``) holds id, type,
title, description, tags, the type's own fields (``extra_fields``: a prompt's name and
arguments) and the dates (ISO 8601 strings).
"""

from __future__ import annotations

import unicodedata
import zipfile
from collections.abc import Iterable, Iterator
from typing import Any

import yaml

from content.models import Item
from content.shapes import ExportItem, export_item

MAX_STEM = 80


class _Sink:
    """A write-only, unseekable file object whose written bytes are taken with ``take()``."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._offset = 0

    def write(self, data: bytes, /) -> int:
        self._parts.append(bytes(data))
        self._offset += len(data)
        return len(data)

    def tell(self) -> int:
        return self._offset

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        data, self._parts = b"".join(self._parts), []
        return data


# Names Windows reserves for devices, with or without an extension: a file ``con.md`` cannot be
# created there (SPEC §14). ``slug`` already leaves out every reserved character.
WINDOWS_DEVICES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{port}{n}" for port in ("com", "lpt") for n in range(10)]
)


def slug(text: str | None) -> str:
    """An ASCII file-name stem: accents folded, anything else a hyphen, at most MAX_STEM."""
    folded = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode()
    out: list[str] = []
    for char in folded.lower():
        if char.isalnum():
            out.append(char)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")[:MAX_STEM].strip("-")


def front_matter(item: Item) -> ExportItem:
    """The export shape without content (the file's body), ``id`` first (SPEC §14)."""
    data = export_item(item, with_content=False)
    return {"id": data["id"], **data}  # the same keys, id moved first


def markdown_file(item: Any) -> str:
    header = yaml.safe_dump(
        front_matter(item), sort_keys=False, allow_unicode=True, default_flow_style=False
    )
    return f"---\n{header}---\n\n{item.content or ''}"


class _Names:
    def __init__(self) -> None:
        self._used: set[str] = set()

    def for_item(self, item: Any) -> str:
        label = getattr(item, item.name_field) if item.name_field else item.title
        stem = slug(label) or str(item.pk)
        if stem in WINDOWS_DEVICES:
            stem = f"{stem}-{item.type_name}"
        folder = f"{item.type_name}s"
        candidate, n = f"{folder}/{stem}.md", 1
        while candidate in self._used:
            n += 1
            candidate = f"{folder}/{stem}-{n}.md"
        self._used.add(candidate)
        return candidate


def _zip_info(name: str, item: Any) -> zipfile.ZipInfo:
    stamp = item.updated_at.timetuple()[:6]
    info = zipfile.ZipInfo(name, date_time=stamp if stamp[0] >= 1980 else (1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def write_markdown_zip(items: Iterable[Any]) -> Iterator[bytes]:
    """The zip as ``bytes`` chunks, one per member plus the closing central directory."""
    sink = _Sink()
    names = _Names()
    with zipfile.ZipFile(sink, mode="w") as archive:
        for item in items:
            archive.writestr(_zip_info(names.for_item(item), item), markdown_file(item))
            yield sink.take()
    yield sink.take()
