"""Retention, run on a schedule: the change feed and webhook deliveries (SPEC §17.1, §17.2),
version history (SPEC §6) and the task queue's finished records; on SQLite, the query planner's
statistics too.

Every task worker queues ``prune_task`` when it starts and then once per ``TIDDLY_PRUNE_INTERVAL``
seconds (``tiddly.tasks.register_periodic``), so `make run` alone keeps every table to its
retention; ``manage.py prune_changes`` / ``prune_history`` do the same by hand or from cron.
"""

from __future__ import annotations

import json
from typing import TypedDict

from django.db import connection
from django_tasks import task

from content.history import prune_all
from content.history.changes import prune_changes
from content.services.webhooks import prune_deliveries
from tiddly.tasks import prune_finished


class Pruned(TypedDict):
    changes: int
    deliveries: int
    history: int  # version and event rows
    tasks: int  # finished task records


def prune_expired() -> Pruned:
    """Drop changes older than TIDDLY_CHANGES_RETENTION_DAYS, deliveries older than
    TIDDLY_WEBHOOK_DELIVERY_DAYS, history past TIDDLY_HISTORY_MAX_VERSIONS/_DAYS and task records
    finished more than TIDDLY_TASK_RESULT_DAYS ago; how many of each. Idempotent."""
    history = prune_all()
    return {
        "changes": prune_changes(),
        "deliveries": prune_deliveries(),
        "history": history.versions + history.events + history.orphans,
        "tasks": prune_finished(),
    }


# The tables FTS5 keeps each full-text index in (``{index}_data`` and so on).
FTS5_SHADOWS = ("data", "idx", "config", "docsize", "content")


def refresh_statistics() -> None:
    """SQLite: refresh the query planner's statistics (``ANALYZE``: 0.25 s for 10 000 notes and
    480 000 search chunks). Without them SQLite guesses that an owner's index finds ten rows and
    prefers it to the primary key for ``id IN (…)``, scanning every item of the owner to check
    200 search hits. Not sampled (``analysis_limit``): a sample of 1 000 rows estimated 1 000
    items an owner where there were 10 000, and the planner kept the owner's index.

    The full-text indexes' own tables are left out, and statistics an earlier release kept for
    them are dropped: FTS5 reads them its own way, and statistics taken when a worker started on
    an empty database made every later write to the index slower than the last (a 100 000-line
    note's create from 0.25 to over 1 s of CPU after twenty).
    PostgreSQL's autovacuum keeps its own statistics: nothing to do there."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table'")
        tables = dict(cursor.fetchall())
        virtual = {name for name, sql in tables.items() if (sql or "").startswith("CREATE VIRTUAL")}
        shadows = {f"{name}_{suffix}" for name in virtual for suffix in FTS5_SHADOWS}
        if "sqlite_stat1" in tables:
            cursor.execute(
                "DELETE FROM sqlite_stat1 WHERE tbl IN (SELECT value FROM json_each(%s))",
                [json.dumps(sorted(shadows))],
            )
        for name in sorted(tables):
            if name not in shadows and name not in virtual and not name.startswith("sqlite_"):
                cursor.execute(f'ANALYZE "{name}"')


@task()
def prune_task() -> Pruned:
    pruned = prune_expired()
    refresh_statistics()
    return pruned
