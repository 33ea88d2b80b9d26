"""A page's readable text as Markdown, with its title and description (SPEC §15). No Django.

HTML goes through trafilatura (main text with headings, lists, links, tables, code; no navigation,
banners or scripts), PDFs through pypdf, text/plain and text/markdown are kept as they are; any
other type is `Unsupported` (a `skipped` capture). A body that claims a type but cannot be read
as it raises `Unreadable` (a `failed` capture). Both carry an instructional message.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass
from typing import Any

from content.text import page_markdown

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})

# pypdf and trafilatura log every oddity of a broken file at WARNING; a capture reports its own.
logging.getLogger("pypdf").setLevel(logging.ERROR)
logging.getLogger("trafilatura").setLevel(logging.ERROR)


class Unsupported(Exception):
    """The content type is not one Tiddly extracts text from."""


class Unreadable(Exception):
    """The body could not be read as the type it claims."""


class TooComplex(Unreadable):
    """Extracting the body was stopped at its time or memory limit (message: `too complex: …`)."""


@dataclass(frozen=True)
class Page:
    title: str | None
    description: str | None
    content: str | None


# trafilatura's options that keep what a reader of the page needs (links, headings, emphasis,
# code, tables, images as `![alt](url)`) as Markdown, and leave out comments. What it still
# loses (a fence's language, quotes) ``page_markdown`` puts back.
EXTRACT_OPTIONS: dict[str, Any] = {
    "output_format": "markdown",
    "include_links": True,
    "include_formatting": True,
    "include_tables": True,
    "include_comments": False,
    "include_images": True,
}
# An inline image (`data:`) is the picture's bytes, not a link: megabytes of base64 in content.
_INLINE_IMAGE = re.compile(r"!\[[^\]\n]*\]\(data:[^)\s]*\)\n?")


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.replace("\x00", "").strip()
    return text or None


def _one_line(text: str | None) -> str | None:
    cleaned = _clean(text)
    return " ".join(cleaned.split()) if cleaned else None


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # an unknown charset name
        return body.decode("utf-8", errors="replace")


def _looks_like_html(body: bytes) -> bool:
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


def media_kind(content_type: str, body: bytes) -> str:
    """`html`, `pdf`, `text`, or raise Unsupported."""
    if content_type in HTML_TYPES or (not content_type and _looks_like_html(body)):
        return "html"
    if content_type in PDF_TYPES:
        return "pdf"
    if content_type in TEXT_TYPES:
        return "text"
    raise Unsupported(f"unsupported content type {content_type or '(none given)'}")


def extract(body: bytes, *, content_type: str, charset: str | None = None) -> Page:
    kind = media_kind(content_type, body)
    if kind == "pdf":
        return _pdf(body)
    if kind == "text":
        text = _clean(_decode(body, charset))
        title = page_markdown.first_heading(text) if text else None
        return Page(title=title, description=None, content=text)
    return extract_html(_decode(body, charset) if charset else body)


def head(body: bytes, *, content_type: str, charset: str | None = None) -> Page:
    """Only the title and description (a preview): no main-text extraction, no PDF page text."""
    kind = media_kind(content_type, body)
    if kind == "pdf":
        return _pdf_head(body)
    if kind == "text":
        text = _clean(_decode(body[:100_000], charset))
        return Page(
            title=page_markdown.first_heading(text) if text else None,
            description=None,
            content=None,
        )
    tree = _tree(_decode(body, charset) if charset else body)
    return Page(title=_title(tree), description=_description(tree), content=None)


def _tree(html: str | bytes) -> Any:
    import trafilatura

    html = html.replace("\x00", "") if isinstance(html, str) else html.replace(b"\x00", b"")
    if not html.strip():
        raise Unreadable("the page is empty: there is no text to keep")
    tree = trafilatura.load_html(html)
    if tree is None:
        raise Unreadable("the page is not readable HTML")
    return tree


def _title(tree: Any) -> str | None:
    return _meta(tree, "//meta[@property='og:title']/@content") or _meta(tree, "//title/text()")


def _description(tree: Any) -> str | None:
    return _meta(tree, "//meta[@property='og:description']/@content") or _meta(
        tree, "//meta[@name='description']/@content"
    )


def _meta(tree: Any, xpath: str) -> str | None:
    """The first non-blank value ``xpath`` selects in an lxml tree (trafilatura's ``load_html``)."""
    found = tree.xpath(xpath)
    for value in found:
        text = _one_line(str(value))
        if text:
            return text
    return None


def extract_html(html: str | bytes) -> Page:
    import trafilatura

    tree = _tree(html)
    title, description = _title(tree), _description(tree)
    marks = page_markdown.Marks()
    page_markdown.mark(tree, marks)
    text = trafilatura.extract(tree, **EXTRACT_OPTIONS)
    if text:
        text = _INLINE_IMAGE.sub("", page_markdown.finish(text, marks))
    return Page(title=title, description=description, content=_clean(text))


def _pdf_head(body: bytes) -> Page:
    from pypdf import PdfReader

    try:
        meta = PdfReader(io.BytesIO(body)).metadata
        title = meta.title if meta is not None else None
    except Exception as exc:  # pypdf raises many kinds on a broken file
        raise Unreadable(f"not a readable PDF ({type(exc).__name__}: {str(exc)[:200]})") from None
    return Page(title=_one_line(title), description=None, content=None)


def _pdf(body: bytes) -> Page:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(body))
        texts = [page.extract_text() or "" for page in reader.pages]
        meta = reader.metadata
        title = meta.title if meta is not None else None
    except Exception as exc:  # pypdf raises many kinds on a broken file
        raise Unreadable(f"not a readable PDF ({type(exc).__name__}: {str(exc)[:200]})") from None
    content = _clean("\n\n".join(texts))
    # A PDF's metadata title, else its first line (what a reader sees as its heading).
    title = _one_line(title) or (page_markdown.first_line(content) if content else None)
    return Page(title=title, description=None, content=content)
