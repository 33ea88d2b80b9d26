"""Netscape bookmark files (``NETSCAPE-Bookmark-file-1``): a streaming parser and writer.

Pure Python on top of the standard library's ``html.parser`` — no Django, no regular expressions
over the document. The format is a loose HTML dialect every browser writes a little differently:

    <!DOCTYPE NETSCAPE-Bookmark-file-1>
    <META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
    <TITLE>Bookmarks</TITLE><H1>Bookmarks</H1>
    <DL><p>
        <DT><H3 ADD_DATE="…" PERSONAL_TOOLBAR_FOLDER="true">Bookmarks bar</H3>
        <DL><p>
            <DT><A HREF="https://…" ADD_DATE="…" LAST_MODIFIED="…" TAGS="a,b">Title</A>
            <DD>Description
        </DL><p>
    </DL><p>

Pocket's export is not a ``<DL>`` tree but ``<h1>Unread</h1><ul><li><a href time_added tags>``
lists; it is read by the same parser (``<ul>`` is a list, ``time_added`` a date, the "Read
Archive" section means archived).

What the parser reports, entry by entry (``index`` = position among the file's ``<A>`` links,
0-based, folders not counted):

- ``NetscapeEntry`` for every http(s) link: url, title, description (``<DD>``), the enclosing
  folder names (browsers' own root folders left out, see ``ROOT_FOLDERS``) and the ``TAGS``
  attribute (raw names: turning them into Tiddly tags is the importer's job), dates;
- an ``ImportSkip`` (``content.portability.records``) for every other link: ``javascript:`` bookmarklets, Firefox ``place:``
  queries, ``file:``/``chrome:``/``about:`` URLs, a link without ``HREF``.

What counts as malformed (``NetscapeError``, carrying the 1-based line and column) — the format is
lenient, so only what makes the result untrustworthy:

- *not a bookmark file*: at the end, neither the ``NETSCAPE-Bookmark-file-1`` doctype, nor any
  ``<DL>`` list, nor a Pocket-style link (``<a time_added>``) was seen — e.g. a random web page
  with no list, a JSON file sent as HTML, an empty file;
- *truncated*: the file ends while a ``<DL>``/``<UL>`` list is still open (every exporter closes
  its lists, so an open one means the end of the file is missing; the position is the end);
- *binary or mis-encoded*: a NUL character, or bytes that are not UTF-8 (the position is the first
  offending byte). Every exporter we know writes UTF-8 (and says so in its ``META``).

Unclosed ``<A>``/``<DT>``/``<DD>``, stray ``</DL>``, unknown tags and attributes, missing or
garbage dates are tolerated, as browsers tolerate them.
"""

from __future__ import annotations

import codecs
import html
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import Any, Protocol

from content.portability.records import ImportSkip

# Folders that browsers create themselves: they organise nothing, so they are not tags. Compared
# case-insensitively. Localised browsers mark the same folders with PERSONAL_TOOLBAR_FOLDER /
# UNFILED_BOOKMARKS_FOLDER attributes, which are honoured whatever the folder's name.
ROOT_FOLDERS = frozenset(
    {
        "bookmarks",  # a root folder some tools write around everything
        "bookmarks bar",  # Chrome, Brave, Vivaldi
        "bookmarks toolbar",  # Firefox
        "bookmarks menu",  # Firefox, Safari
        "other bookmarks",  # Chrome, Firefox
        "mobile bookmarks",  # Chrome, Firefox
        "unsorted bookmarks",  # old Firefox
        "favorites",  # Safari (its bar), Internet Explorer
        "favorites bar",  # Edge, Safari
        "favourites bar",
        "other favorites",  # Edge
        "mobile favorites",  # Edge
        "reading list",  # Safari (com.apple.ReadingList)
        "imported",  # Safari/Edge "Imported" wrapper around a previous import
    }
)
ROOT_FOLDER_ATTRIBUTES = ("personal_toolbar_folder", "unfiled_bookmarks_folder")
# Root folders some tools write around all the others (and a nameless top folder).
WRAPPER_FOLDERS = frozenset({"bookmarks"})
# linkding writes its archived state as a pseudo-tag and its notes inside the description.
TAG_RE = re.compile(r"[^,]+")
# Tags that end an open link and (but for <DD>) an open description.
STRUCTURAL = frozenset(("a", "dt", "li", "dl", "ul", "h3", "h1", "dd"))
LINKDING_ARCHIVED_TAGS = frozenset({"linkding:archived", "linkding:bookmarks.archived"})
LINKDING_NOTES = ("[linkding-notes]", "[/linkding-notes]")
POCKET_ARCHIVE_SECTION = "read archive"
WEB_SCHEMES = frozenset({"http", "https"})
READ_CHUNK_BYTES = 256 * 1024


class NetscapeError(ValueError):
    """The file is not a usable bookmark file; ``line``/``column`` are 1-based."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{message} (line {line}, column {column})")
        self.message = message
        self.line = line
        self.column = column


@dataclass(slots=True)
class NetscapeEntry:
    index: int
    url: str
    title: str
    description: str | None = None
    folders: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    add_date: datetime | None = None
    last_modified: datetime | None = None
    archived: bool = False
    notes: str | None = None


@dataclass(slots=True)
class _Folder:
    name: str
    is_root: bool
    is_wrapper: bool = False  # a root around every other root (browsers' roots sit inside it)


@dataclass(slots=True)
class _Link:
    index: int
    attrs: dict[str, str]
    text: list[str] = field(default_factory=list)


def parse_timestamp(value: str | None) -> datetime | None:
    """Seconds since the epoch (milli/microseconds recognised by size); None when unusable."""
    if not value:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if number != number or number <= 0:  # NaN, zero and negatives mean "unknown"
        return None
    if number > 1e14:
        number /= 1_000_000
    elif number > 1e11:
        number /= 1000
    try:
        return datetime.fromtimestamp(number, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _clean_text(parts: list[str]) -> str:
    return " ".join("".join(parts).split())


class NetscapeParser(HTMLParser):
    """Incremental: ``feed()`` text, take finished results from ``drain()``, then ``close()``."""

    def __init__(
        self, *, warn: Callable[[str], None] | None = None, max_tags: int | None = None
    ) -> None:
        super().__init__(convert_charrefs=True)
        self.warnings: list[str] = []
        # Warnings go to ``warn`` when given (the importer keeps a bounded list), else ``warnings``.
        self._warn = warn or self.warnings.append
        self._max_tags = max_tags
        self._ready: list[NetscapeEntry | ImportSkip] = []
        self._lists: list[tuple[str, _Folder | None, int]] = []  # (tag, folder, opening line)
        self._pending_folder: _Folder | None = None
        self._heading: list[str] | None = None
        self._heading_attrs: dict[str, str] = {}
        self._h1: list[str] | None = None
        self._section = ""
        self._link: _Link | None = None
        self._dd: list[str] | None = None
        self._dd_target: NetscapeEntry | None = None
        self._count = 0
        self._recognised = False

    # --- results ---

    def drain(self) -> list[NetscapeEntry | ImportSkip]:
        ready, self._ready = self._ready, []
        return ready

    def close(self) -> None:
        super().close()
        self._finish_link()
        self._finish_dd()
        line, column = self.getpos()
        if not self._recognised:
            raise NetscapeError(
                "This is not a bookmark file: it has no NETSCAPE-Bookmark-file-1 doctype, no "
                "<DL> list and no Pocket links. Export your bookmarks as HTML from the browser "
                "or service and upload that file",
                1,
                1,
            )
        if self._lists:
            tag, folder, opened = self._lists[-1]
            where = f"folder '{folder.name}'" if folder else f"the <{tag.upper()}> list"
            raise NetscapeError(
                f"The file ends inside {where} opened on line {opened}: it looks truncated. "
                "Export it again and upload the complete file",
                line,
                column + 1,
            )

    # --- HTMLParser callbacks ---

    def handle_decl(self, decl: str) -> None:
        if decl.lower().startswith("doctype netscape-bookmark-file"):
            self._recognised = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in STRUCTURAL:
            if self._link is not None:
                self._finish_link()
            if tag != "dd" and (self._dd is not None or self._dd_target is not None):
                self._finish_dd()  # a description runs until the next structural tag
        if tag == "a":
            self._start_link(attrs)
        elif tag in ("dl", "ul"):
            self._open_list(tag)
        elif tag == "h3":
            self._heading = []
            self._heading_attrs = {k: v or "" for k, v in attrs}
            self._dd_target = None
        elif tag == "h1":
            self._h1 = []
        elif tag == "dd" and self._dd_target is not None:
            self._dd = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._finish_link()
        elif tag == "h3":
            self._finish_heading()
        elif tag == "h1" and self._h1 is not None:
            self._section = _clean_text(self._h1).lower()
            self._h1 = None
        elif tag in ("dl", "ul"):
            self._finish_link()
            self._finish_dd()
            self._close_list(tag)

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._link.text.append(data)
        elif self._heading is not None:
            self._heading.append(data)
        elif self._dd is not None:
            self._dd.append(data)
        elif self._h1 is not None:
            self._h1.append(data)

    # --- structure ---

    def _open_list(self, tag: str) -> None:
        self._recognised = self._recognised or tag == "dl"
        self._lists.append((tag, self._pending_folder, self.getpos()[0]))
        self._pending_folder = None
        self._dd_target = None

    def _close_list(self, tag: str) -> None:
        for position in range(len(self._lists) - 1, -1, -1):
            if self._lists[position][0] == tag:
                del self._lists[position:]
                return
        self._warn(f"Line {self.getpos()[0]}: a stray </{tag.upper()}> was ignored.")

    def _finish_heading(self) -> None:
        if self._heading is None:
            return
        name = _clean_text(self._heading)
        attrs = self._heading_attrs
        # A browser's own folder is one only at the top of the tree (inside no folder but a
        # wrapper around everything): "Favorites" nested in "Work", or "Reading List" in
        # Chrome's "Bookmarks bar", is a folder like any other.
        at_top = all(f is None or f.is_wrapper for _, f, _ in self._lists)
        is_root = at_top and (
            name.lower() in ROOT_FOLDERS
            or any(attrs.get(a, "").lower() == "true" for a in ROOT_FOLDER_ATTRIBUTES)
        )
        wrapper = at_top and (not name or name.lower() in WRAPPER_FOLDERS)
        self._pending_folder = _Folder(name, is_root or not name, wrapper)
        self._heading = None

    def _folder_names(self) -> list[str]:
        return [f.name for _, f, _ in self._lists if f is not None and not f.is_root]

    # --- links ---

    def _start_link(self, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self._recognised = self._recognised or "time_added" in values
        self._link = _Link(self._count, values)
        self._count += 1

    def _finish_link(self) -> None:
        link, self._link = self._link, None
        if link is None:
            return
        title = _clean_text(link.text)
        url = link.attrs.get("href", "").strip()
        skip = _unsupported(url)
        if skip:
            self._ready.append(ImportSkip(link.index, skip, title or None, url or None))
            self._dd_target = None
            return
        tags = self._tags(link.attrs.get("tags", ""))
        if tags is None:
            reason = f"The bookmark has more than {self._max_tags} tags; the limit is per item."
            self._ready.append(ImportSkip(link.index, reason, title or None, url))
            self._dd_target = None
            return
        entry = self._entry(link, url, title, tags)
        self._ready.append(entry)
        self._dd_target = entry

    def _tags(self, raw: str) -> list[str] | None:
        """The ``TAGS`` attribute's names; None when there are more than ``max_tags`` distinct
        ones (found without splitting the whole attribute: a 40 MB attribute costs nothing)."""
        if not raw:
            return []
        seen: dict[str, None] = {}
        for match in TAG_RE.finditer(raw):
            name = match.group().strip()
            if name:
                seen[name] = None
                if self._max_tags is not None and len(seen) > self._max_tags + 2:
                    return None  # +2: linkding's archive markers are not tags
        tags = list(seen)
        if self._max_tags is not None and len(set(tags) - LINKDING_ARCHIVED_TAGS) > self._max_tags:
            return None
        return tags

    def _entry(self, link: _Link, url: str, title: str, tags: list[str]) -> NetscapeEntry:
        attrs = link.attrs
        archived = self._section == POCKET_ARCHIVE_SECTION
        if LINKDING_ARCHIVED_TAGS.intersection(tags):
            archived = True
            tags = [t for t in tags if t not in LINKDING_ARCHIVED_TAGS]
        return NetscapeEntry(
            index=link.index,
            url=url,
            title=title,
            folders=self._folder_names(),
            tags=tags,
            add_date=parse_timestamp(attrs.get("add_date") or attrs.get("time_added")),
            last_modified=parse_timestamp(attrs.get("last_modified")),
            archived=archived,
        )

    def _finish_dd(self) -> None:
        parts, self._dd = self._dd, None
        target, self._dd_target = self._dd_target, None
        if parts is None or target is None:
            return
        text = "".join(parts).strip()
        opening, closing = LINKDING_NOTES
        start = text.find(opening)
        if start != -1:
            end = text.find(closing, start)
            end = len(text) if end == -1 else end
            target.notes = text[start + len(opening) : end].strip() or None
            text = (text[:start] + text[end + len(closing) :]).strip()
        target.description = text or None


def _unsupported(url: str) -> str | None:
    if not url:
        return "The link has no URL (HREF)."
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in WEB_SCHEMES:
        return None
    if not scheme:
        return "The URL is not absolute (no http:// or https://)."
    return f"{scheme}: URLs cannot be bookmarked; only http and https URLs are imported."


# --- reading a byte stream ----------------------------------------------------------------------


class NetscapeReader:
    """Decode a byte stream as UTF-8 and parse it, yielding entries as they are completed.

    ``entries()`` raises ``NetscapeError`` (possibly after yielding some entries: callers import
    in one transaction and roll back). ``warnings`` holds non-fatal notes once it is exhausted.
    """

    def __init__(
        self,
        chunks: Iterable[bytes],
        *,
        warn: Callable[[str], None] | None = None,
        max_tags: int | None = None,
    ) -> None:
        self._chunks = chunks
        self._parser = NetscapeParser(warn=warn, max_tags=max_tags)
        self._line = 1
        self._column = 0
        self.warnings = self._parser.warnings

    def entries(self) -> Iterator[NetscapeEntry | ImportSkip]:
        decoder = codecs.getincrementaldecoder("utf-8-sig")()
        for chunk in self._chunks:
            self._feed(self._decode(decoder, chunk, final=False))
            yield from self._parser.drain()
        self._feed(self._decode(decoder, b"", final=True))
        self._parser.close()
        yield from self._parser.drain()

    def _decode(self, decoder: Any, chunk: bytes, *, final: bool) -> str:
        try:
            return str(decoder.decode(chunk, final))
        except UnicodeDecodeError as exc:
            good = exc.object[: exc.start].decode("utf-8", "replace")
            line, column = self._advance(good, commit=False)
            raise NetscapeError(
                "The file is not UTF-8 text (is it a bookmark export at all?). Export it again "
                "from the browser, which writes UTF-8",
                line,
                column,
            ) from None

    def _feed(self, text: str) -> None:
        nul = text.find("\x00")
        if nul != -1:
            line, column = self._advance(text[:nul], commit=False)
            raise NetscapeError(
                "The file contains binary data (a NUL character): it is not a bookmark export",
                line,
                column,
            )
        self._advance(text, commit=True)
        self._parser.feed(text)

    def _advance(self, text: str, *, commit: bool) -> tuple[int, int]:
        newlines = text.count("\n")
        line = self._line + newlines
        column = len(text) - text.rfind("\n") - 1 if newlines else self._column + len(text)
        if commit:
            self._line, self._column = line, column
        return line, column + 1


def read_chunks(stream: Any, size: int = READ_CHUNK_BYTES) -> Iterator[bytes]:
    while True:
        chunk = stream.read(size)
        if not chunk:
            return
        yield chunk


def parse_netscape(data: bytes | str) -> tuple[list[NetscapeEntry | ImportSkip], list[str]]:
    """Parse a whole document at once (tests, small files)."""
    raw = data.encode() if isinstance(data, str) else data
    reader = NetscapeReader([raw])
    return list(reader.entries()), reader.warnings


# --- writing ------------------------------------------------------------------------------------


class NetscapeBookmark(Protocol):
    url: str
    title: str | None
    description: str | None
    created_at: datetime
    updated_at: datetime

    def tag_names(self) -> list[str]: ...

    def display_title(self) -> str | None: ...


HEADER = (
    "<!DOCTYPE NETSCAPE-Bookmark-file-1>\n"
    "<!-- This is an automatically generated file.\n"
    "     It will be read and overwritten.\n"
    "     DO NOT EDIT! -->\n"
    '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">\n'
    "<TITLE>Bookmarks</TITLE>\n"
    "<H1>Bookmarks</H1>\n"
    "<DL><p>\n"
)
FOOTER = "</DL><p>\n"


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def bookmark_html(bookmark: NetscapeBookmark) -> str:
    """One ``<DT><A …>`` line (plus ``<DD>`` when there is a description)."""
    tags = ",".join(bookmark.tag_names())
    line = (
        f'    <DT><A HREF="{_attr(bookmark.url)}" '
        f'ADD_DATE="{int(bookmark.created_at.timestamp())}" '
        f'LAST_MODIFIED="{int(bookmark.updated_at.timestamp())}"'
        + (f' TAGS="{_attr(tags)}"' if tags else "")
        + f">{html.escape(bookmark.display_title() or bookmark.url, quote=False)}</A>\n"
    )
    if bookmark.description:
        line += f"    <DD>{html.escape(bookmark.description, quote=False)}\n"
    return line


def write_netscape(bookmarks: Iterable[NetscapeBookmark]) -> Iterator[str]:
    """The document as a stream of ``str`` chunks: header, one chunk per bookmark, footer."""
    yield HEADER
    for bookmark in bookmarks:
        yield bookmark_html(bookmark)
    yield FOOTER
