"""Only http, https and mailto links in captured Markdown (SPEC §15). No Django.

A captured page is Markdown that REST and MCP hand out as it is, and clients render: a
``[x](javascript:…)`` there would run in whatever renders it. ``safe_links`` turns every link or
image whose destination names another scheme into its plain text (an image into its alt text),
drops such a reference definition and unwraps such an autolink. Destinations are judged as a
CommonMark renderer reads them: backslash escapes and HTML entities resolved, whitespace and
control characters ignored, case folded. Links without a scheme (relative ones) are kept. Code —
fenced blocks and inline spans — is left exactly as it is (it is shown, never followed).
"""

from __future__ import annotations

import html
import re

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_INVISIBLE = re.compile(r"[\x00-\x20\x7f]+")
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*)>")
_DEFINITION = re.compile(r"^ {0,3}\[(?:[^\]\\]|\\.)+\]:[ \t]*(?:<([^>\n]*)>|(\S+)).*(?:\n|$)", re.M)


def is_safe(destination: str) -> bool:
    """Whether a link destination (as written in Markdown) may stay a link."""
    plain = html.unescape(_ESCAPED.sub(r"\1", destination))
    found = _SCHEME.match(_INVISIBLE.sub("", plain).lower())
    return found is None or found.group(1) in SAFE_SCHEMES


def safe_links(markdown: str) -> str:
    """``markdown`` with every link to another scheme than http, https or mailto made plain."""
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in markdown.splitlines(keepends=True):
        opened = _FENCE.match(line)
        if fence is None and opened:
            out.append(_prose("".join(prose)))
            prose, fence = [], opened.group(1)
            out.append(line)
        elif fence is not None:
            out.append(line)
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
        else:
            prose.append(line)
    out.append(_prose("".join(prose)))
    return "".join(out)


def _prose(text: str) -> str:
    """Text outside fenced code: its inline code spans kept, the rest made safe."""
    pieces, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        pieces += [_unlink(text[last : span.start()]), span.group(0)]
        last = span.end()
    pieces.append(_unlink(text[last:]))
    return "".join(pieces)


def _unlink(text: str) -> str:
    text = _DEFINITION.sub(
        lambda m: "" if not is_safe(m.group(1) or m.group(2)) else m.group(0), text
    )
    text = _AUTOLINK.sub(lambda m: m.group(0) if is_safe(m.group(1)) else m.group(1), text)
    return _inline(text)


def _inline(text: str) -> str:
    """Each ``[text](destination …)`` with an unsafe destination becomes ``text``."""
    out: list[str] = []
    start = 0
    at = text.find("](")
    while at != -1:
        found = _link_at(text, at)
        if found is None:
            at = text.find("](", at + 2)
            continue
        opening, closing, label = found
        out += [text[start:opening], label]
        start = closing
        at = text.find("](", closing)
    out.append(text[start:])
    return "".join(out)


def _link_at(text: str, bracket: int) -> tuple[int, int, str] | None:
    """(start, end, plain text) of an unsafe inline link whose ``](`` is at ``bracket``."""
    begin = _destination_start(text, bracket + 2)
    destination, after = _destination(text, begin)
    if destination is None or is_safe(destination):
        return None
    opening = _label_start(text, bracket)
    if opening is None:  # no label to keep: drop the destination alone
        return bracket + 1, _close(text, after), ""
    image = opening > 0 and text[opening - 1] == "!"
    label = text[opening + 1 : bracket]
    return opening - image, _close(text, after), label


def _destination_start(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\n":
        at += 1
    return at


def _destination(text: str, at: int) -> tuple[str | None, int]:
    if text.startswith("<", at):
        end = text.find(">", at)
        return (None, at) if end == -1 else (text[at + 1 : end], end + 1)
    depth, end = 0, at
    while end < len(text):
        char = text[end]
        if char == "\\":
            end += 2
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                break
            depth -= 1
        elif char in " \t\n":
            break
        end += 1
    return text[at:end], min(end, len(text))


def _close(text: str, at: int) -> int:
    """Past the ``)`` that ends the link (after an optional title), else ``at``."""
    end = text.find(")", at)
    return at if end == -1 else end + 1


def _label_start(text: str, bracket: int) -> int | None:
    depth, at = 0, bracket - 1
    while at >= 0:
        char = text[at]
        escaped = at > 0 and text[at - 1] == "\\"
        if char == "]" and not escaped:
            depth += 1
        elif char == "[" and not escaped:
            if depth == 0:
                return at
            depth -= 1
        at -= 1
    return None
