"""Bulk inserts of many new rows at once (imports, search chunks): PostgreSQL's COPY, SQLite's
prepared INSERT run once per row.

On PostgreSQL the rows go through psycopg 3's COPY: Django's bulk INSERT spends more time
building and converting the SQL of 1 000-row statements than PostgreSQL spends running them.
Values go through each field's ``get_db_prep_save`` — the conversion ``bulk_create`` does — so
UUIDs, aware datetimes and JSON arrive exactly as the ORM would write them; database-generated
columns (the full-text ``search_vector``) are computed by PostgreSQL. Either way a constraint
violation raises ``IntegrityError``, as an INSERT would.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, models

BATCH_SIZE = 1000


def insert_objects(model: type[models.Model], objects: Sequence[models.Model]) -> None:
    """Insert new instances: primary keys already set (as the UUIDv7 defaults are), or all
    unset for the database to number (an auto-incrementing key; the instances do not learn
    theirs)."""
    if not objects:
        return
    pk = model._meta.pk
    numbered = isinstance(pk, models.AutoField | models.BigAutoField) and all(
        obj.pk is None for obj in objects
    )
    fields = [
        f
        for f in model._meta.concrete_fields
        if not getattr(f, "generated", False) and not (numbered and f is pk)
    ]
    # The connection itself, not the ``connection`` proxy: at 100 000 rows the proxy's attribute
    # lookups cost more than the conversions.
    db = connections[DEFAULT_DB_ALIAS]
    prepare = [(field.attname, field.get_db_prep_save) for field in fields]
    rows = ([save(getattr(obj, name), db) for name, save in prepare] for obj in objects)
    columns = [field.column or field.attname for field in fields]
    if connection.vendor == "postgresql":
        _copy(model, columns, rows)
    else:
        _insert_many(model, columns, rows)


def insert_rows(
    model: type[models.Model], attnames: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert plain value rows (e.g. many-to-many links) whose ``attnames`` are the columns."""
    if connection.vendor != "postgresql":
        objects = [model(**dict(zip(attnames, row, strict=True))) for row in rows]
        model._default_manager.bulk_create(objects, batch_size=BATCH_SIZE)
        return
    _copy(model, attnames, rows)


def _insert_many(model: type[models.Model], columns: Sequence[str], rows: Iterable[Any]) -> None:
    # One prepared INSERT run per row: SQLite has no COPY, and its per-row cost is below the
    # ORM's for building a multi-row statement.
    quote = connection.ops.quote_name
    names = ", ".join(quote(c) for c in columns)
    marks = ", ".join(["%s"] * len(columns))
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {quote(model._meta.db_table)} ({names}) VALUES ({marks})", list(rows)
        )


def _copy(model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    names = ", ".join(quote(c) for c in columns)
    with connection.cursor() as cursor:
        raw = cursor.cursor  # the psycopg cursor under Django's wrapper
        with raw.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
