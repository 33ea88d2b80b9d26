"""Compiled SQL of queries whose shape repeats from request to request (issues 30 and 27).

Building and compiling the library list's UNION of three types' columns, or its chips' marker
query, costs Django ~2 ms of CPU each per request, several times what PostgreSQL needs to answer
them. Their SQL depends only on the query's shape (types, views, tags, saved filter, sort, page);
the owner and the moment ``now`` are the values that change. So a shape is compiled once with
marker values for those two, kept, and executed with the request's values in their place.

The same holds for the reads every request of one item makes (the item, its tags): building
their querysets cost more CPU than SQLite's answers. ``Shaped`` names such a query by its shape
and the values that change; ``one`` and ``flat`` build and compile it once per shape, then run
its SQL and make the model instance as Django's own iterable does. Likewise the rows every write
adds or changes (the item, its history version, its change): ``insert`` and ``update`` compile a
model's INSERT or UPDATE once per set of columns.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from django.core.exceptions import EmptyResultSet
from django.db import DatabaseError, connection
from django.db.models import Model, Q, QuerySet
from django.db.models.expressions import DatabaseDefault
from django.db.models.query import MAX_GET_RESULTS
from django.db.models.signals import post_save, pre_save
from django.db.models.sql import InsertQuery, UpdateQuery

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
    def compile_it() -> tuple[str, list[Any]]:
        qs = build(OWNER, NOW)
        sql, params = qs.query.get_compiler(using=qs.db).as_sql()
        return sql, list(params)

    return _kept(_shapes, key, compile_it)


def _kept(store: OrderedDict[Hashable, Any], key: Hashable, make: Callable[[], Any]) -> Any:
    """``store``'s entry for ``key``, made (outside the lock) when missing; the least recently
    used go beyond ``LIMIT`` entries."""
    with _lock:
        if key in store:
            store.move_to_end(key)
            return store[key]
    made = make()
    with _lock:
        store[key] = made
        while len(store) > LIMIT:
            store.popitem(last=False)
    return made


def _adapted(value: Any) -> Any:
    if isinstance(value, datetime):
        return connection.ops.adapt_datetimefield_value(value)
    return value


# --- one item, or one column, by a query built once per shape -----------------------------------


@dataclass(frozen=True)
class Shaped:
    """A query whose SQL depends only on ``shape``: ``build(*values)`` builds it, and a call with
    other values of the same types (an owner's id, an item's id, a name, a moment) may only
    change the query's parameters. ``shape`` must name everything else ``build`` depends on.
    Rows are made as a plain queryset's: no ``select_related`` (refused) or ``prefetch_related``
    (not run)."""

    model: Any
    shape: Hashable
    build: Callable[..., QuerySet]
    values: tuple[Any, ...]

    def queryset(self) -> QuerySet:
        return self.build(*self.values)

    def then(self, step: Hashable, change: Callable[[QuerySet], QuerySet]) -> Shaped:
        """This query changed by ``change``, which must add no value of the request's own (or
        name it in ``step``)."""
        build = self.build
        return Shaped(
            self.model, (self.shape, step), lambda *values: change(build(*values)), self.values
        )


def then(
    query: Shaped | QuerySet, step: Hashable, change: Callable[[QuerySet], QuerySet]
) -> Shaped | QuerySet:
    """``query`` changed by ``change``, whether it is ``Shaped`` or a plain queryset."""
    return query.then(step, change) if isinstance(query, Shaped) else change(query)


@dataclass(frozen=True)
class _Plan:
    sql: str
    # Per parameter: (index into the values, how the marker was adapted), or a constant.
    slots: tuple[tuple[int, Callable[[Any], Any]] | tuple[None, Any], ...]
    columns: tuple[Any, ...]  # the select's expressions, for their converters
    model: Any  # None: a values query
    init_list: tuple[str, ...]
    fields: slice
    annotations: tuple[tuple[str, int], ...]


_plans: OrderedDict[Hashable, _Plan | None] = OrderedDict()


def one(query: Shaped) -> Any:
    """The single instance ``query`` finds, or None (as ``QuerySet.get``: more than one raises)."""
    plan = _plan_for(query, single=True)
    if plan is None:
        try:
            return query.queryset().get()
        except query.model.DoesNotExist:
            return None
    rows = _run(plan, query.values)
    if len(rows) > 1:
        raise query.model.MultipleObjectsReturned(f"{len(rows)} rows for {query.shape!r}")
    if not rows:
        return None
    row = rows[0]
    item = plan.model.from_db(connection.alias, plan.init_list, row[plan.fields])
    for name, position in plan.annotations:
        setattr(item, name, row[position])
    return item


def flat(query: Shaped) -> list[Any]:
    """The first column of ``query``'s rows (a ``values_list(..., flat=True)``)."""
    plan = _plan_for(query, single=False)
    if plan is None:
        return list(query.queryset())
    return [row[0] for row in _run(plan, query.values)]


def _plan_for(query: Shaped, *, single: bool) -> _Plan | None:
    if any(value is None for value in query.values):  # NULL compiles to another shape of SQL
        return None
    key = (connection.alias, connection.vendor, single, query.model, query.shape)
    plan: _Plan | None = _kept(_plans, key, lambda: _compile(query, single=single))
    return plan


def _compile(query: Shaped, *, single: bool) -> _Plan | None:
    """The query's plan, or None where it cannot be kept (the ORM then runs it every time)."""
    markers = tuple(_marker(value, n) for n, value in enumerate(query.values))
    qs = query.build(*markers)
    if single:
        qs = qs.order_by()
        if (
            not qs.query.select_for_update
            or connection.features.supports_select_for_update_with_limit
        ):
            qs.query.set_limits(high=MAX_GET_RESULTS)
    compiler = qs.query.get_compiler(using=qs.db)
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:
        return None
    forms = {n: _forms(marker) for n, marker in enumerate(markers)}
    slots: list[tuple[int, Callable[[Any], Any]] | tuple[None, Any]] = []
    found = set()
    for param in params:
        slot: tuple[int, Callable[[Any], Any]] | tuple[None, Any] = (None, param)
        for n, candidates in forms.items():
            for form, adapt in candidates:
                if type(param) is type(form) and param == form:
                    slot = (n, adapt)
                    found.add(n)
        slots.append(slot)
    if len(found) < len(markers):  # a value the SQL does not carry as a parameter
        return None
    columns = tuple(s[0] for s in compiler.select[: compiler.col_count])
    info = compiler.klass_info
    if info is None:
        return _Plan(sql, tuple(slots), columns, None, (), slice(0, 0), ())
    if info.get("related_klass_infos"):
        return None
    chosen = info["select_fields"]
    fields = slice(chosen[0], chosen[-1] + 1)
    init_list = tuple(s[0].target.attname for s in compiler.select[fields])
    annotations = tuple((compiler.annotation_col_map or {}).items())
    return _Plan(sql, tuple(slots), columns, info["model"], init_list, fields, annotations)


def _run(plan: _Plan, values: tuple[Any, ...]) -> list[list[Any]]:
    params: list[Any] = [adapt(values[n]) if n is not None else adapt for n, adapt in plan.slots]
    with connection.cursor() as cursor:
        cursor.execute(plan.sql, params)
        rows = cursor.fetchmany(MAX_GET_RESULTS) if plan.model is not None else cursor.fetchall()
    converters = []
    for position, column in enumerate(plan.columns):
        functions = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        if functions:
            converters.append((position, functions, column))
    out = []
    for row in map(list, rows):
        for position, functions, column in converters:
            value = row[position]
            for function in functions:
                value = function(value, column, connection)
            row[position] = value
        out.append(row)
    return out


def _marker(value: Any, n: int) -> Any:
    """A value of ``value``'s type that no row holds, distinct for each position ``n``."""
    if isinstance(value, bool):
        raise TypeError("a flag changes the query's shape: name it in the shape instead")
    if isinstance(value, int):
        return OWNER - n
    if isinstance(value, uuid.UUID):
        return uuid.UUID(int=0x7D1D_1E00_0000_4000_8000_0000_0000_0000 + n)
    if isinstance(value, str):
        return f"\x01tiddly-marker-{n}"
    if isinstance(value, datetime):
        return NOW.replace(microsecond=NOW.microsecond + n)
    raise TypeError(f"no marker for a {type(value).__name__}")


def _forms(marker: Any) -> list[tuple[Any, Callable[[Any], Any]]]:
    """How the marker may appear among a compiled query's parameters, and how to put a value in
    its place in that form."""
    forms: list[tuple[Any, Callable[[Any], Any]]] = [(marker, _same)]
    if isinstance(marker, uuid.UUID):
        forms.append((marker.hex, _hex))
    if isinstance(marker, datetime):
        forms.append((_adapted(marker), _adapted))
    return forms


def _same(value: Any) -> Any:
    return value


def _hex(value: Any) -> Any:
    return value.hex


# --- one row written, by a statement compiled once per model and columns -------------------------

_writes: OrderedDict[Hashable, tuple[str, tuple[Any, ...]] | None] = OrderedDict()


def insert(obj: Model) -> None:
    """``obj.save(force_insert=True)``: its INSERT compiled once per model and columns, then run
    with the values each column prepares for the database, as the compiler would."""
    meta = obj._meta
    if not _plain(obj):
        obj.save(force_insert=True)
        return
    if obj.pk is None:
        obj.pk = meta.pk.get_pk_value_on_save(obj)
    fields = [
        f
        for f in meta.local_concrete_fields
        if not f.generated and (obj.pk is not None or f is not meta.auto_field)
    ]
    values = [f.pre_save(obj, True) for f in fields]
    defaults = tuple(isinstance(v, DatabaseDefault) for v in values)
    if any(
        hasattr(v, "resolve_expression") and not d for v, d in zip(values, defaults, strict=True)
    ):
        obj.save(force_insert=True)
        return
    key, params = _statement("insert", obj, fields, values, defaults)
    returning = (
        meta.db_returning_fields if connection.features.can_return_columns_from_insert else []
    )

    def compile_it() -> tuple[str, tuple[Any, ...]] | None:
        query = InsertQuery(type(obj))
        query.insert_values(fields, [obj])
        compiler = query.get_compiler(using=connection.alias)
        compiler.returning_fields = returning
        statements = compiler.as_sql()
        if len(statements) != 1 or not _matching(statements[0][1], params):
            return None
        return statements[0][0], tuple(compiler.returning_params)

    plan = _kept(_writes, key, compile_it)
    if plan is None:
        obj.save(force_insert=True)
        return
    sql, returning_params = plan
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if returning:
            row = cast(Any, connection.ops).fetch_returned_insert_columns(cursor, returning_params)
            for field, value in zip(returning, row, strict=True):
                column = field.get_col(meta.db_table)
                functions = connection.ops.get_db_converters(column) + column.get_db_converters(
                    connection
                )
                for function in functions:
                    value = function(value, column, connection)
                setattr(obj, field.attname, value)
    obj._state.adding = False
    obj._state.db = connection.alias


def update(obj: Model, fields: Sequence[str] | None = None) -> None:
    """``obj.save(update_fields=fields)`` (every column but the key when None): its UPDATE
    compiled once per model and columns."""
    meta = obj._meta
    if not _plain(obj) or obj.pk is None or obj._state.adding:
        obj.save(update_fields=fields)
        return
    chosen = [
        f
        for f in meta.local_concrete_fields
        if not f.primary_key
        and not f.generated
        and (fields is None or f.name in fields or f.attname in fields)
    ]
    values = [f.pre_save(obj, False) for f in chosen]
    if not chosen or any(hasattr(v, "resolve_expression") for v in values):
        obj.save(update_fields=fields)
        return
    nulls = tuple(v is None for v in values)  # NULL is written into the SQL, not a parameter
    key, params = _statement("update", obj, chosen, values, nulls)
    params.append(meta.pk.get_db_prep_value(obj.pk, connection))

    def compile_it() -> tuple[str, tuple[Any, ...]] | None:
        query = UpdateQuery(type(obj))
        query.add_update_fields([(f, None, v) for f, v in zip(chosen, values, strict=True)])
        query.add_q(Q(pk=obj.pk))
        sql, compiled_params = query.get_compiler(using=connection.alias).as_sql()
        return (sql, ()) if _matching(compiled_params, params) else None

    plan = _kept(_writes, key, compile_it)
    if plan is None:
        obj.save(update_fields=fields)
        return
    with connection.cursor() as cursor:
        cursor.execute(plan[0], params)
        if cursor.rowcount == 0:
            raise DatabaseError("Save with update_fields did not affect any rows.")
    obj._state.db = connection.alias


def _statement(
    kind: str, obj: Model, fields: Sequence[Any], values: Sequence[Any], in_sql: tuple[bool, ...]
) -> tuple[Hashable, list[Any]]:
    """The key naming the statement that writes ``values`` to ``fields``, and its parameters:
    each value as its column prepares it for the database, but those ``in_sql`` (a database
    default, a NULL), which the SQL itself holds."""
    params = [
        f.get_db_prep_save(v, connection)
        for f, v, skip in zip(fields, values, in_sql, strict=True)
        if not skip
    ]
    attnames = tuple(f.attname for f in fields)
    return (kind, connection.alias, connection.vendor, type(obj), attnames, in_sql), params


def _matching(compiled: Sequence[Any], ours: Sequence[Any]) -> bool:
    """Whether the compiler's parameters are the ones ``insert``/``update`` prepare (an adapter
    such as psycopg's ``Jsonb`` compares by identity: by its repr then)."""
    return len(compiled) == len(ours) and all(
        a == b or (type(a) is type(b) and repr(a) == repr(b))
        for a, b in zip(compiled, ours, strict=True)
    )


def _plain(obj: Model) -> bool:
    """Whether saving ``obj`` is just its table's statement: no parents, no signal receivers."""
    model = type(obj)
    return not (
        model._meta.parents
        or model._meta.proxy
        or pre_save.has_listeners(model)
        or post_save.has_listeners(model)
    )
