"""Captured Markdown keeps only http, https and mailto links (SPEC §15, issue 29)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from content.text.links import safe_links

# A renderer that follows every link it is given (no validation), to see what a client would.
_renderer = MarkdownIt("commonmark")
_renderer.validateLink = lambda url: True  # type: ignore[method-assign]


def _hrefs(markdown: str) -> list[str]:
    tokens = (
        _renderer.parseInline(markdown) if "\n\n" not in markdown else _renderer.parse(markdown)
    )
    found: list[str] = []
    stack = list(tokens)
    while stack:
        token = stack.pop()
        stack.extend(token.children or [])
        for name in ("href", "src"):
            if token.attrGet(name) is not None:
                found.append(str(token.attrGet(name)))
    return found


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("see [x](javascript:alert(1)) now", "see x now"),
        ("[click](JaVaScRiPt:alert(1))", "click"),
        ("[a](  java\tscript:alert(1) )", "[a](  java\tscript:alert(1) )"),  # not a link at all
        ('[t](javascript:alert((1)) "title")', "t"),
        ("[e](javascript&#58;alert(1))", "e"),
        ("[b](javascript\\:alert(1))", "b"),
        ("[c](<javascript:alert(1)>)", "c"),
        ("![pic](javascript:alert(1))", "pic"),
        ("[d](data:text/html;base64,PHNjcmlwdD4=)", "d"),
        ("[v](vbscript:msgbox)", "v"),
        ("[nested [brackets]](javascript:x)", "nested [brackets]"),
        ("<javascript:alert(1)>", "javascript:alert(1)"),
        ("[r][1]\n\n[1]: javascript:alert(1)\n", "[r][1]\n\n"),
        ("[ok](https://example.com/a_(b)) and [m](mailto:a@b.c)", None),
        ("[rel](/docs/page) and [frag](#top) and [p](http://x.y)", None),
        ("<https://example.com>", None),
        ("`[x](javascript:alert(1))` in code", None),
        ("```md\n[x](javascript:alert(1))\n```\n", None),
    ],
)
def test_only_http_https_and_mailto_links_stay_links(markdown: str, expected: str | None) -> None:
    assert safe_links(markdown) == (markdown if expected is None else expected)


@given(
    label=st.text(alphabet="ab[]()! ", max_size=8),
    scheme=st.sampled_from(["javascript", "JAVASCRIPT", "java&#115;cript", "data", "vbscript"]),
    tail=st.text(alphabet="ab()\\:' \"", max_size=10),
)
def test_no_unsafe_href_survives(label: str, scheme: str, tail: str) -> None:
    text = f"x [{label}]({scheme}:{tail}) y ![{label}]({scheme}:{tail})"
    for href in _hrefs(safe_links(text)):
        lowered = href.lower().replace(" ", "")
        assert not lowered.startswith(("javascript:", "data:", "vbscript:")), (text, href)
