"""The JSON renderer: DRF's, encoding with orjson.

A note's content can be several MB, and DRF's renderer builds it as a ``str`` (through
``json.dumps``) before encoding it to bytes: two more copies of the body and about half of a large
read's time. orjson writes UTF-8 bytes at once. What it does not encode itself — dates and
times, decimals, lazy strings, querysets — goes to DRF's own encoder, so bodies read the same;
an indented body (``Accept: application/json; indent=2``) is DRF's.
"""

from __future__ import annotations

from typing import Any

import orjson
from rest_framework import renderers
from rest_framework.utils.encoders import JSONEncoder

# Datetimes to DRF's encoder (it writes "Z" and milliseconds); int or UUID keys as strings, as
# the json module writes them.
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS
_default = JSONEncoder().default


class JSONRenderer(renderers.JSONRenderer):
    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Any = None,
    ) -> bytes:
        if data is None:
            return b""
        indent = self.get_indent(accepted_media_type or "", renderer_context or {})
        if indent is not None or not self.compact or not self.strict:
            return super().render(data, accepted_media_type, renderer_context)
        body = orjson.dumps(data, default=_default, option=_OPTIONS)
        # U+2028/U+2029 escaped as DRF does, so a body stays valid inside a <script>; an ASCII
        # body (one fast pass) holds neither.
        if not body.isascii() and (b"\xe2\x80\xa8" in body or b"\xe2\x80\xa9" in body):
            body = body.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        return body
