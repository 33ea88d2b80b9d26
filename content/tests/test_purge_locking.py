"""A permanent delete locks the item and its links' other ends in the canonical order that
create_link and delete_link use, so a link made at the same moment waits instead of deadlocking
(PostgreSQL; SQLite serialises writers)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError, connection, transaction

from content import services
from content.history import Actor
from content.models import Note, Relationship
from content.queries import ItemRef
from content.services.relationships import End, create_link

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL only"),
]


def _note(owner: Any, title: str) -> Note:
    return services.create_item(
        owner=owner, model=Note, data={"title": title, "content": "x"}, actor=Actor()
    )


def test_a_purge_waits_in_canonical_order_for_a_link_being_made() -> None:
    owner = get_user_model().objects.create_user("purger")
    a, b = sorted((_note(owner, "a"), _note(owner, "b")), key=lambda n: n.pk)
    # b (the one purged) is linked to a; a concurrent create_link(a, b) or delete_link of that
    # link locks a, then b. A purge that locked b first would deadlock with it.
    create_link(
        owner=owner,
        source=End("note", a.pk),
        target=End("note", b.pk),
        description=None,
        actor=Actor(),
    )
    holding_a = threading.Event()
    purge_started = threading.Event()
    outcome: dict[str, Any] = {}

    def linker() -> None:
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL lock_timeout = '5s'")
                Note.objects.select_for_update().get(pk=a.pk)  # create_link's first lock
                holding_a.set()
                purge_started.wait(5)
                threading.Event().wait(0.5)  # let the purge reach its first lock
                Note.objects.select_for_update().get(pk=b.pk)  # ...and its second
                outcome["linker"] = "locked b"
        except OperationalError as exc:  # deadlock: the purge held b while waiting for a
            outcome["linker"] = f"failed: {exc}"
        finally:
            connection.close()

    def purger() -> None:
        holding_a.wait(5)
        purge_started.set()
        try:
            services.delete_item_permanently(
                owner=owner, ref=ItemRef(model=Note, pk=b.pk), actor=Actor()
            )
            outcome["purger"] = "purged"
        except OperationalError as exc:  # deadlock: the purge held b while waiting for a
            outcome["purger"] = f"failed: {exc}"
        finally:
            connection.close()

    threads = [threading.Thread(target=linker), threading.Thread(target=purger)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert outcome == {"linker": "locked b", "purger": "purged"}
    assert not Note.objects.filter(pk=b.pk).exists()
    assert not Relationship.objects.filter(owner=owner).exists()
