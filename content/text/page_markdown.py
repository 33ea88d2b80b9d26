"""What trafilatura's Markdown loses, put back (SPEC §15): a code fence's language and quotes.

trafilatura drops every attribute of ``<pre>``/``<code>`` and renders ``<blockquote>`` as plain
paragraphs. Before extraction ``mark`` writes a plain-word marker into the page's tree — the
language as the code's first line, a start and an end word around each quote — and after it
``finish`` turns the markers into Markdown (`````python``, ``> ``). The markers carry a random
nonce per extraction, so a page cannot forge one; a marker that lost its partner is dropped.
Also the title a Markdown or plain-text page or a PDF's first line gives (``first_heading``,
``first_line``). No Django.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

# Classes that name a code block's language: `language-python` (Prism, highlight.js, most
# Markdown renderers), `lang-rust`, GitHub's `highlight-source-js`, SyntaxHighlighter's
# `brush: ruby`, pandoc's `sourceCode python`.
_CLASS_LANGUAGE = re.compile(
    r"(?:^|\s)(?:language-|lang-|highlight-source-|brush:\s*|sourceCode\s+)([A-Za-z0-9_+#.-]{1,30})"
)
_LANGUAGE_ATTRIBUTES = ("data-lang", "data-language")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,30}")
_NOT_LANGUAGES = frozenset({"none", "text", "plaintext", "plain", "nohighlight", "sourcecode"})
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
TITLE_MAX_CHARS = 200


class Marks:
    """The marker words of one extraction."""

    def __init__(self, nonce: str | None = None) -> None:
        nonce = nonce or secrets.token_hex(6)
        self.language = f"TIDDLYLANG{nonce}"
        self.quote_start = f"TIDDLYQUOTESTART{nonce}"
        self.quote_end = f"TIDDLYQUOTEEND{nonce}"


def _language(element: Any) -> str | None:
    """The language a ``<pre>``, its ``<code>`` or their wrapper names, if any."""
    candidates = [element, *element.iterchildren("code")]
    parent = element.getparent()
    if parent is not None:
        candidates.append(parent)
    for node in candidates:
        for attribute in _LANGUAGE_ATTRIBUTES:
            value = (node.get(attribute) or "").strip()
            if _LANGUAGE.fullmatch(value) and value.lower() not in _NOT_LANGUAGES:
                return value.lower()
        found = _CLASS_LANGUAGE.search(node.get("class") or "")
        if found and found.group(1).lower() not in _NOT_LANGUAGES:
            return found.group(1).lower()
    return None


def mark(tree: Any, marks: Marks) -> None:
    """Write the markers into an lxml HTML tree (trafilatura's ``load_html``), in place."""
    for pre in tree.iter("pre"):
        language = _language(pre)
        if language is None:
            continue
        target = next(pre.iterchildren("code"), pre)
        target.text = f"{marks.language}{language}\n{target.text or ''}"
    for quote in tree.iter("blockquote"):
        quote.text = f"{marks.quote_start} {quote.text or ''}"
        if len(quote):
            quote[-1].tail = f"{quote[-1].tail or ''} {marks.quote_end}"
        else:
            quote.text = f"{quote.text} {marks.quote_end}"


def finish(markdown: str, marks: Marks) -> str:
    """trafilatura's Markdown with the markers turned into fence languages and ``> `` quotes."""
    markdown = re.sub(
        rf"^(`{{3,}}|~{{3,}})\n{marks.language}([A-Za-z0-9_+#.-]+)\n",
        r"\1\2\n",
        markdown,
        flags=re.MULTILINE,
    )
    markdown = markdown.replace(marks.language, "")
    quoted = re.compile(rf"{marks.quote_start}[ \t]*(.*?)[ \t]*{marks.quote_end}", flags=re.DOTALL)
    markdown = quoted.sub(lambda m: _quote(m.group(1)), markdown)
    for word in (marks.quote_start, marks.quote_end):  # partners lost in extraction
        markdown = re.sub(rf"[ \t]*{word}[ \t]*", "", markdown)
    return markdown


def _quote(text: str) -> str:
    lines = text.strip("\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(f"> {line}".rstrip() for line in lines)


def first_heading(text: str) -> str | None:
    """The text of a Markdown document's first ATX heading (``# Title``) outside code fences."""
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
            continue
        if fence is None and (found := _HEADING.match(line)):
            return _title(found.group(1))
    return None


def first_line(text: str) -> str | None:
    """The first non-blank line (a PDF without a title in its metadata), as a title."""
    for line in text.splitlines():
        if line.strip():
            return _title(line)
    return None


def _title(text: str) -> str | None:
    title = " ".join(text.split())
    if len(title) > TITLE_MAX_CHARS:
        title = title[: TITLE_MAX_CHARS - 1].rstrip() + "…"
    return title or None
