"""Compiled SQL of list queries whose shape repeats from request to request (issue 30).

Building and compiling the library list's UNION of three types' columns, or its chips' marker
query, costs Django ~2 ms of CPU each per request, several times what PostgreSQL needs to answer
them. Their SQL depends only on the query's shape (types, views, tags, saved filter, sort, page);
the owner and the moment ``now`` are the values that change. So a shape is compiled once with
marker values for those two, kept, and executed with the request's values in their place.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.db.models import QuerySet

OWNER = -739_155_201  # no user's id
NOW = datetime(1901, 2, 3, 4, 5, 6, 789_012, tzinfo=UTC)
LIMIT = 256

_shapes: OrderedDict[Hashable, tuple[str, list[Any]]] = OrderedDict()
_lock = threading.Lock()

Build = Callable[[Any, datetime], QuerySet]


def rows(shape: Hashable, build: Build, owner_pk: Any, now: datetime) -> list[dict[str, Any]]:
    """``build(owner, now)``'s rows as dicts, for ``owner_pk`` at ``now``: compiled once per
    ``shape`` (which must name everything else the SQL depends on) and database."""
    sql, params = _compiled((connection.alias, connection.vendor, shape), build)
    owner_value, now_value = _adapted(OWNER), _adapted(NOW)
    now_now = _adapted(now)
    values = [
        owner_pk if p == owner_value and type(p) is type(owner_value)
        else now_now if p == now_value and type(p) is type(now_value)
        else p
        for p in params
    ]  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        names = [column[0] for column in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _compiled(key: Hashable, build: Build) -> tuple[str, list[Any]]:
    with _lock:
        found = _shapes.get(key)
        if found is not None:
            _shapes.move_to_end(key)
            return found
    qs = build(OWNER, NOW)
    sql, params = qs.query.get_compiler(using=qs.db).as_sql()
    found = (sql, list(params))
    with _lock:
        _shapes[key] = found
        while len(_shapes) > LIMIT:
            _shapes.popitem(last=False)
    return found


def _adapted(value: Any) -> Any:
    if isinstance(value, datetime):
        return connection.ops.adapt_datetimefield_value(value)
    return value
