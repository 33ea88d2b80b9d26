"""The JSON request parser: DRF's, plus a 400 (not a 500) for pathologically nested bodies."""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            # `[[[[…` thousands deep exhausts the decoder's recursion limit; no real request
            # nests like that.
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
