"""Shared pytest fixtures: a cast of users (owner, other) with API tokens and API clients."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from tiddly.models import ApiToken


def pytest_configure(config: Any) -> None:
    # The default cache is a file cache shared by the server's workers (tiddly/settings.py); each
    # test process (xdist worker) gets its own directory, so one test's cache.clear() cannot
    # touch another's throttle counts. Set before anything opens the cache.
    import tempfile

    from django.conf import settings

    if settings.CACHES["default"]["BACKEND"].endswith("FileBasedCache"):
        location = tempfile.mkdtemp(prefix="tiddly-test-cache-")
        settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": location}}
    # Static files as a fresh checkout has them (none collected), whether or not `make run`
    # collected them into this one: pages then name the files the tests expect.
    from django.test.signals import setting_changed

    settings.STATIC_ROOT = tempfile.mkdtemp(prefix="tiddly-test-static-")
    # A storage made already (at import) is dropped, as a test's override would drop it.
    setting_changed.send(
        sender=type(settings), setting="STATIC_ROOT", value=settings.STATIC_ROOT, enter=True
    )


@pytest.fixture(autouse=True)
def _no_throttling(settings: Any) -> None:
    # Throttling has its own tests; elsewhere hundreds of requests must not trip it.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}


@pytest.fixture(autouse=True)
def _index_at_once(settings: Any) -> None:
    # The workers' poller waits for a burst of writes to end; tests poll right after a write.
    settings.TIDDLY_INDEX_QUIET_MS = 0


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    # The default PBKDF2 costs ~0.5 s per user; tests create users constantly.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    from django.core.cache import cache

    from content.queries.cache import contents
    from tiddly.auth import tokens

    cache.clear()
    contents.clear()
    tokens.clear()


@pytest.fixture
def run_tasks() -> Any:
    """``run_tasks()`` runs every due task in-process through the real queue (``tiddly.tasks``)."""
    from tiddly.tasks import run_tasks as run

    return run


def _make_user(username: str) -> Any:
    return get_user_model().objects.create_user(username=username, password="pw-" + username)


@pytest.fixture
def owner(db: None) -> Any:
    return _make_user("owner")


@pytest.fixture
def other(db: None) -> Any:
    """A stranger whose items must stay invisible to ``owner`` (and vice versa)."""
    return _make_user("other")


def _token_client(user: Any) -> APIClient:
    _, plaintext = ApiToken.issue(owner=user, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    client.token = plaintext  # type: ignore[attr-defined]
    return client


@pytest.fixture
def api(owner: Any) -> APIClient:
    """APIClient authenticated as ``owner`` with a Bearer API token."""
    return _token_client(owner)


@pytest.fixture
def other_api(other: Any) -> APIClient:
    return _token_client(other)


@pytest.fixture
def anon() -> APIClient:
    return APIClient()


@pytest.fixture
def session_api(owner: Any) -> APIClient:
    client = APIClient()
    client.force_login(owner)
    return client


@pytest.fixture
def staff(owner: Any) -> Any:
    """``owner`` with admin access (staff, not superuser: sees only their own items)."""
    owner.is_staff = True
    owner.save()
    return owner


@pytest.fixture
def staff_client(staff: Any) -> Client:
    """A browser-like client signed in to the admin as ``staff``."""
    client = Client()
    client.force_login(staff)
    return client
