"""Helpers for change-feed tests."""

from __future__ import annotations

import time

from django.db.models import Max

from content.history.changes import Position, settled
from content.models.changes import Change


def wait_until_settled(timeout: float = 60.0) -> None:
    """Wait (bounded) until every committed change is settled.

    On PostgreSQL the horizon is the cluster's oldest running transaction, which may belong to
    another database on a shared server (another test run): committed rows become readable when it
    ends. This is synchronisation, not a timing assertion.
    """
    latest = Change.objects.aggregate(xid=Max("xid"), id=Max("id"))
    if latest["id"] is None:
        return
    target = Position(latest["xid"], 0)
    deadline = time.monotonic() + timeout
    while settled().through <= target and time.monotonic() < deadline:
        time.sleep(0.02)
