"""Bulk inserts with PostgreSQL's COPY (psycopg 3), for the importer's large batches.

Values go through each field's ``get_db_prep_save`` — the same conversion ``bulk_create`` does —
so UUIDs, aware datetimes and JSON (``Jsonb``) arrive exactly as the ORM would write them;
database-generated columns (the full-text ``search_vector``) are computed by PostgreSQL.
Constraint violations raise ``IntegrityError`` as an INSERT would.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models


def _quoted(name: str) -> str:
    return connection.ops.quote_name(name)


def copy_models(model: type[models.Model], objects: Sequence[models.Model]) -> None:
    """COPY model instances (primary keys already set, as UUIDv7 defaults are)."""
    fields = [f for f in model._meta.concrete_fields if not getattr(f, "generated", False)]
    rows = (
        [field.get_db_prep_save(getattr(obj, field.attname), connection) for field in fields]
        for obj in objects
    )
    copy_rows(model, [field.column for field in fields], rows)


def copy_rows(model: type[models.Model], columns: Sequence[str], rows: Iterable[Any]) -> None:
    table = _quoted(model._meta.db_table)
    names = ", ".join(_quoted(c) for c in columns)
    with connection.cursor() as cursor:
        raw = cursor.cursor  # the psycopg cursor under Django's wrapper
        with raw.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
