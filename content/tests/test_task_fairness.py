"""Fairness (SPEC §15, round 4): a receiver that accepts and never answers delays captures by
seconds, not by its deliveries' timeouts; one owner's backlog does not hold another's behind it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.test import APIClient

from content.history.changes import ChangeRecord, record_changes
from content.models.capture import CaptureStatus, PageCapture
from content.services import webhooks

ROOT = Path(__file__).resolve().parents[2]
SILENT_PORT, PAGES_PORT = 8124, 8125
PAGE = b"<html><head><title>T</title></head><body><article><p>Words enough.</p></article></body>"


@pytest.fixture
def silent_receiver() -> Iterator[str]:
    """Accepts connections and never answers (a receiver hung or dropping replies)."""
    listener = socket.create_server(("127.0.0.1", SILENT_PORT), backlog=512)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{SILENT_PORT}/hook"
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


class _Page(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)


@pytest.fixture
def pages() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", PAGES_PORT), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{PAGES_PORT}"
    finally:
        server.shutdown()
        server.server_close()


def _env() -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "DJANGO_SETTINGS_MODULE": "tiddly.settings",
        "TIDDLY_EMBEDDINGS": "off",
        "TIDDLY_OUTBOUND_ALLOWED_HOSTS": f"127.0.0.1:{SILENT_PORT},127.0.0.1:{PAGES_PORT}",
    }


def _changes(owner_id: Any, count: int) -> None:
    record_changes(
        [
            ChangeRecord(
                owner_id=owner_id, item_type="note", item_id=uuid.uuid4(), action="created"
            )
            for _ in range(count)
        ]
    )


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="a worker process needs a database it can see"
)
@pytest.mark.django_db(transaction=True)
def test_captures_queued_behind_deliveries_to_a_silent_receiver_finish_promptly(
    silent_receiver: str, pages: str, settings: Any
) -> None:
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = [f"127.0.0.1:{SILENT_PORT}", f"127.0.0.1:{PAGES_PORT}"]
    owner = get_user_model().objects.create_user(username="busy", password="pw")
    for _ in range(5):
        webhooks.create_webhook(owner=owner, url=silent_receiver)
    _changes(owner.pk, 40)
    assert webhooks.dispatch() == 200  # 200 deliveries queued first
    api = APIClient()
    api.force_authenticate(owner)
    for n in range(10):
        response = api.post("/api/bookmarks/", {"url": f"{pages}/p{n}"}, format="json")
        assert response.status_code == 201, response.content
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "worker", "--interval", "0.2"], cwd=ROOT, env=_env()
    )
    try:
        deadline = time.monotonic() + 60  # a bound, not a timing assertion: before, ~30 min
        while PageCapture.objects.exclude(status=CaptureStatus.DONE).exists():
            assert time.monotonic() < deadline, "captures waited behind the deliveries"
            assert worker.poll() is None
            time.sleep(0.2)
    finally:
        worker.kill()
        worker.wait(30)
    assert PageCapture.objects.filter(status=CaptureStatus.DONE).count() == 10
