"""Markdown -> sanitised HTML for the public share page (SPEC §17.4).

Two well-kept libraries, no hand-written filtering: markdown-it-py renders CommonMark with raw
HTML turned off (a ``<script>`` in the text comes out as visible text) and its own link
validation (``javascript:``/``vbscript:``/``data:`` links are not made links), then nh3 (the
Ammonia sanitiser) keeps only an allow-list of tags, attributes and URL schemes — a second wall
should the renderer ever let something through.

Both load with the first page they render (~4 MB): a process that serves only the API and MCP
never needs them.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table",
    "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
    "td": {"align"},
    "th": {"align"},
    "code": {"class"},
}
URL_SCHEMES = {"http", "https", "mailto"}


@functools.cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    return markdown.enable(["table", "strikethrough"])


def markdown_to_html(text: str | None) -> str:
    """Safe HTML for ``text``: only allow-listed markup, only http(s)/mailto URLs, links marked
    ``noopener noreferrer nofollow ugc``."""
    if not text:
        return ""
    import nh3

    return nh3.clean(
        _markdown().render(text),
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow ugc",
        strip_comments=True,
    )
