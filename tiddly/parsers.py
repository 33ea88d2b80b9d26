"""The JSON request parser: DRF's, plus a 400 (not a 500) for pathologically nested bodies and for
lone surrogates anywhere in the body.

JSON may spell a lone UTF-16 surrogate (``"\\ud800"``); Python decodes it into a ``str`` that
cannot be encoded as UTF-8, so it breaks whatever touches it later — the database, the JSON
renderer echoing an unknown key back, a log line. The serializers' text fields reject it in
values they declare, but not in keys or in values nobody declares, so the parser refuses it once
for the whole body, keys and values at any depth.

A large body is let go once parsed: DRF parses JSON from ``request.body``, which Django keeps (and
a stream over it) for the rest of the request, so a 6 MB create held its raw bytes beside the
parsed text through its whole transaction.
"""

from __future__ import annotations

from io import BytesIO
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError, ValidationError

from tiddly.serializers import printable, text_problem

# Bodies at least this large (bytes) are dropped once parsed.
RELEASED_BODY_BYTES = 1_000_000


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            # `[[[[…` thousands deep exhausts the decoder's recursion limit; no real request
            # nests like that.
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
        problem = find_surrogate(data)
        if problem is not None:
            path, message = problem
            raise ValidationError({path: [message]})  # the handler's validation_error body
        _release_body(parser_context)
        return data


def _release_body(parser_context: Any) -> None:
    """Drop a large parsed body from the Django request (DRF keeps what it parsed in
    ``request.data``). Reading ``request.body`` again raises Django's RawPostDataException, as
    it does after any read of the stream."""
    django_request: Any = getattr((parser_context or {}).get("request"), "_request", None)
    body = getattr(django_request, "_body", None)
    if body is None or len(body) < RELEASED_BODY_BYTES:
        return
    del django_request._body
    django_request._stream = BytesIO()
    django_request._read_started = True


def _surrogate(text: str) -> str | None:
    problem = text_problem(text, allow_nul=True)
    return problem if problem is not None and problem.startswith("Surrogate") else None


def find_surrogate(data: Any) -> tuple[str, str] | None:
    """The first lone surrogate in ``data`` (a parsed JSON value) as (where, message), else None.

    ``where`` is the field's path (``title``, ``edits[0].old_str``), or ``body`` for a key at the
    top level. Iterative, so a deep body cannot exhaust the stack here either.
    """
    todo: list[tuple[str, Any]] = [("", data)]
    while todo:
        path, value = todo.pop()
        if isinstance(value, str):
            problem = _surrogate(value)
            if problem is not None:
                return path or "body", problem
        elif isinstance(value, dict):
            for key, item in value.items():
                problem = _surrogate(key)
                if problem is not None:
                    return path or "body", f"A key ('{printable(key)}') is not text: {problem}"
                todo.append((f"{path}.{key}" if path else key, item))
        elif isinstance(value, list):
            todo.extend((f"{path}[{k}]", item) for k, item in enumerate(value))
    return None
