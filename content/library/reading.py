"""An item's reading page and its history (SPEC §9): ``/library/<type>/<id>/`` and
``/library/<type>/<id>/history/[<version>/]``.

The content is read in windows of ``LINES`` lines through the same partial read as
``GET /api/{type}/{id}/?start_line=&end_line=`` and rendered by the share page's renderer
(Markdown → sanitised HTML); "Continue" asks for the next window, so a 100 000-line note is never
rendered whole, and a window of a large content is read as a piece of 64 000 characters from
its first line (the database decompresses up to there, not megabytes; see ``_read``). A rendered
window is kept per (item, ``updated_at``, window), and related items and suggested tags (a pass
over all the owner's meaning chunks) are a page of their own, so the reading page costs one
window's read.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from content import history, item_types, queries
from content.errors import SearchUnavailable
from content.library import web
from content.library.listing import capture_of
from content.models import Item
from content.queries.cache import ContentCache
from content.search import related
from content.shapes import share_data
from content.text.lines import LineWindow
from content.text.markdown_html import markdown_to_html
from tiddly.errors import TiddlyError

LINES = 200
# A window of a large content is cut from this many characters (200 lines of up to 320): enough
# for prose and code; longer lines read the content whole.
SLICE_CHARS = 64_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
HISTORY_PAGE = 20

# Windows rendered to HTML: a changed item moves ``updated_at`` and simply misses (as the content
# cache does), so nothing is invalidated.
rendered = ContentCache()


def _html(item: Item, window: Any) -> str:
    if window is None or item.type_name == "prompt":
        return ""
    key = (item.type_name, item.pk, item.updated_at, window.start_line, window.end_line)
    html = rendered.get(key)
    if html is None:
        html = markdown_to_html(window.content)
        rendered.put(key, html)
    return html


def _start(request: HttpRequest) -> int:
    try:
        return max(1, int(request.GET.get("start") or 1))
    except ValueError:
        return 1


def _window(item: Item, start: int) -> Any:
    if item.content is None:
        return None
    try:
        return queries.line_window(item.content, start, start + LINES - 1)
    except TiddlyError:  # past the end: the first window
        return queries.line_window(item.content, 1, LINES)


def _meaning(owner: Any, item: Item) -> dict[str, Any]:
    """Related items and suggested tags; empty with a note when search by meaning is down."""
    if item.is_deleted:
        return {"related": [], "suggested": []}
    try:
        found = related.suggestions(owner, item, item_types.type_names())
    except SearchUnavailable as error:
        return {"related": [], "suggested": [], "meaning_error": error.message}
    return {"related": found["related"], "suggested": [t["name"] for t in found["tags"]]}


@dataclass(frozen=True)
class Read:
    item: Item
    window: LineWindow | None
    total: int | None  # the content's line count; None: not known (a piece was read)
    next_at: int | None = None  # where the next window starts in the content, when known


def _read(owner: Any, ref: Any, start: int, hint: tuple[int, int] | None) -> Read:
    """The item and its window of lines from ``start``. A large content that no cache holds is
    read as a piece from the window's first character (the content's start, or ``hint``'s
    offset, which "Continue" links carry with the item's version) when the piece holds the
    window's lines: the page then costs what its window costs, not the decompression and
    transfer of megabytes. Otherwise (lines too long, a stale hint) the content is read whole."""
    at = 0 if start == 1 else hint[0] if hint and hint[0] > 0 else None
    if at is not None:
        item, piece = queries.get_owned_slice(owner, ref, at, SLICE_CHARS)
        if piece is None:  # small or cached: whole
            return _whole(item, start)
        if at == 0 or hint == (at, version(item)):
            found = _from_piece(item, piece, start, at)
            if found is not None:
                return found
    return _whole(queries.get_owned(owner, ref), start)


def _whole(item: Item, start: int) -> Read:
    window = _window(item, start)
    return Read(item, window, window.total_lines if window else None)


def _from_piece(item: Item, piece: str, start: int, at: int) -> Read | None:
    ends = len(piece) <= SLICE_CHARS
    part = queries.line_window(piece, 1, LINES)
    if part is None or (not ends and part.total_lines <= LINES):
        return None  # the piece does not hold the window's lines and the start of the next
    known = start + part.total_lines - 1  # the last line the piece reaches
    window = replace(part, start_line=start, end_line=start + part.end_line - 1,
                     total_lines=known, is_partial=True)  # fmt: skip
    more = not ends or window.end_line < known
    return Read(item, window, known if ends else None, at + len(part.content) + 1 if more else None)


def version(item: Item) -> int:
    """The item's ``updated_at`` in microseconds: a Continue link's offset holds for it only."""
    return (item.updated_at - EPOCH) // timedelta(microseconds=1)


def _hint(request: HttpRequest) -> tuple[int, int] | None:
    try:
        return int(request.GET["at"]), int(request.GET["v"])
    except (KeyError, ValueError):
        return None


@require_GET
@web.library_view
def item_page(request: HttpRequest, type_name: str, pk: str) -> HttpResponse:
    owner = web.owner_of(request)
    read = _read(owner, web.ref_of(type_name, pk), _start(request), _hint(request))
    item, window, total = read.item, read.window, read.total
    more = window is not None and (total is None or window.end_line < total)
    context: dict[str, Any] = {
        "item": item,
        "title": item.display_title() or f"Untitled {item.type_name}",
        "tags": item.tag_names(),
        "url": _safe_href(getattr(item, "url", None)),
        "capture": capture_of(item),
        "share": share_data(item),
        "window": window,
        "total_lines": total,
        "html": _html(item, window),
        "next_start": window.end_line + 1 if window and more else None,
        "next_at": read.next_at,
        "version": version(item),
        "links": queries.related_items(owner, item),
        "undo": _undo(request, item),
    }
    return render(request, "library/item.html", context)


@require_GET
@web.library_view
def related_page(request: HttpRequest, type_name: str, pk: str) -> HttpResponse:
    """Related items by meaning and suggested tags: asked for by a link, not on every read."""
    owner = web.owner_of(request)
    item = queries.get_owned(owner, web.ref_of(type_name, pk))
    linked = {(r["type"], r["id"]) for r in queries.related_items(owner, item)}
    meaning = _meaning(owner, item)
    for r in meaning["related"]:
        r["linked"] = (r["type"], r["id"]) in linked
    context: dict[str, Any] = {
        "item": item,
        "title": item.display_title() or f"Untitled {item.type_name}",
        **meaning,
    }
    return render(request, "library/related.html", context)


def _undo(request: HttpRequest, item: Item) -> int | None:
    """After a restore the page offers to put back the version it replaced (``?undo=N``)."""
    try:
        version = int(request.GET.get("undo") or 0)
    except ValueError:
        return None
    return version if 0 < version < history.latest_version(item) else None


def _safe_href(url: str | None) -> str | None:
    if url and url.lower().startswith(("http://", "https://")):
        return url
    return None


@require_GET
@web.library_view
def history_page(request: HttpRequest, type_name: str, pk: str) -> HttpResponse:
    owner = web.owner_of(request)
    item = queries.get_owned_head(owner, web.ref_of(type_name, pk))
    page = _start(request)
    total, entries = queries.history_page(
        item, limit=HISTORY_PAGE, offset=(page - 1) * HISTORY_PAGE
    )
    latest = history.latest_version(item)
    context = {
        "item": item,
        "title": _title_of(owner, item),
        "entries": entries,
        "latest": latest,
        "previous": page - 1 if page > 1 else None,
        "next": page + 1 if page * HISTORY_PAGE < total else None,
    }
    return render(request, "library/history.html", context)


def _title_of(owner: Any, item: Item) -> str:
    head = queries.owned(owner, type(item)).filter(pk=item.pk).defer("content").get()
    return head.display_title() or f"Untitled {item.type_name}"


@require_GET
@web.library_view
def version_page(request: HttpRequest, type_name: str, pk: str, version: int) -> HttpResponse:
    owner = web.owner_of(request)
    item = queries.get_owned_head(owner, web.ref_of(type_name, pk))
    diff = queries.diff_data(item, version)
    context = {
        "item": item,
        "title": _title_of(owner, item),
        "diff": diff,
        "lines": _diff_lines(diff["diff"]),
        "version": version,
        "latest": history.latest_version(item),
    }
    return render(request, "library/version.html", context)


def _diff_lines(text: str) -> list[tuple[str, str]]:
    """Each line of a unified diff with a class: added, removed, hunk or context."""
    kinds = {"+": "added", "-": "removed", "@": "hunk"}
    return [(kinds.get(line[:1], "context"), line) for line in text.splitlines()]
