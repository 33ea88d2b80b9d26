"""Markdown -> sanitised HTML for the public share page (SPEC §17.4).

Two well-kept libraries, no hand-written filtering: markdown-it-py renders CommonMark with raw
HTML turned off (a ``<script>`` in the text comes out as visible text) and its own link
validation (``javascript:``/``vbscript:``/``data:`` links are not made links), then nh3 (the
Ammonia sanitiser) keeps only an allow-list of tags, attributes and URL schemes — a second wall
should the renderer ever let something through.
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_markdown.enable(["table", "strikethrough"])

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


def markdown_to_html(text: str | None) -> str:
    """Safe HTML for ``text``: only allow-listed markup, only http(s)/mailto URLs, links marked
    ``noopener noreferrer nofollow ugc``."""
    if not text:
        return ""
    return nh3.clean(
        _markdown.render(text),
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow ugc",
        strip_comments=True,
    )
