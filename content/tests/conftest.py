from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from content.tests.webhook_receiver import Receiver, allowed_receiver


@pytest.fixture
def receiver(settings: Any) -> Iterator[Receiver]:
    """A local webhook receiver that verifies signatures, reachable through the outbound guard."""
    with allowed_receiver(settings) as running:
        yield running
