"""No delivery in limbo (SPEC §15/§17.2, round 4): a non-ASCII receiver URL is delivered to, and a
delivery whose attempt raises something unplanned is retried, then failed — never left pending."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from content.models.webhooks import WebhookDelivery
from content.services import webhooks
from content.tests.webhook_receiver import Receiver
from tiddly.tasks import run_tasks

pytestmark = pytest.mark.django_db


def _hook(api: APIClient, receiver: Receiver, url: str) -> None:
    response = api.post("/api/webhooks/", {"url": url}, format="json")
    assert response.status_code == 201, response.content
    receiver.secret = response.json()["secret"]


def _note(api: APIClient) -> None:
    response = api.post("/api/notes/", {"title": "n", "content": "body"}, format="json")
    assert response.status_code == 201


def test_a_non_ascii_receiver_url_is_delivered_to(api: APIClient, receiver: Receiver) -> None:
    _hook(api, receiver, f"http://127.0.0.1:{receiver.port}/hoök?für=ü")
    _note(api)
    run_tasks()
    (got,) = receiver.received
    assert got.verified
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("delivered", 1, 200)


def test_an_unplanned_error_is_retried_then_failed(
    api: APIClient, receiver: Receiver, monkeypatch: Any, settings: Any
) -> None:
    settings.TIDDLY_WEBHOOK_RETRY_DELAYS = [1]
    _hook(api, receiver, receiver.url)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("an HTTP client that chokes")

    monkeypatch.setattr(webhooks.outbound, "fetch", broken)
    _note(api)
    run_tasks()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("pending", 1)
    assert delivery.last_error == (
        "connection failed: unexpected error (TypeError: an HTTP client that chokes)"
    )
    assert delivery.next_attempt_at is not None  # a retry is queued
    run_tasks(due_within=5)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", 2)
    assert delivery.next_attempt_at is None
    assert receiver.received == []
