"""A web process on SQLite leaves PostgreSQL's modules unloaded.

DRF imports ``django.contrib.postgres.fields`` whenever it can (``rest_framework.compat``), and
that loads psycopg and its libpq: ~10 MB of every SQLite web process's memory spent on a
database it never talks to. DRF treats an ImportError there as "PostgreSQL is not installed",
which on SQLite is what we want it to think.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

LEFT_OUT = ("django.contrib.postgres", "psycopg", "psycopg_binary", "psycopg_pool")


class _LeaveOut(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if any(fullname == name or fullname.startswith(name + ".") for name in LEFT_OUT):
            raise ModuleNotFoundError(
                f"{fullname} is left out of a web process on SQLite (tiddly.sqlite.imports)",
                name=fullname,
            )
        return None


def leave_out_postgres() -> bool:
    """Make PostgreSQL's modules unimportable in this process, unless one is already loaded (then
    something needs it); True if they are now left out."""
    if any(name in sys.modules for name in LEFT_OUT):
        return False
    if not any(isinstance(finder, _LeaveOut) for finder in sys.meta_path):
        sys.meta_path.insert(0, _LeaveOut())
    return True
