"""The keyword leg's planner settings (content.queries.lists.bitmap_scans) hold inside its block
only: after it — also when the block fails — the connection plans as before."""

from __future__ import annotations

import pytest
from django.db import connection

from content.queries import lists

pytestmark = pytest.mark.django_db


def _settings() -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('enable_seqscan'), current_setting('enable_indexscan')"
        )
        row = cursor.fetchone()
    return row[0], row[1]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner settings")
def test_bitmap_scans_hold_inside_the_block_only() -> None:
    before = _settings()
    with lists.bitmap_scans():
        assert _settings() == ("off", "off")
    assert _settings() == before
    with pytest.raises(ZeroDivisionError), lists.bitmap_scans():
        1 / 0  # noqa: B018
    assert _settings() == before
