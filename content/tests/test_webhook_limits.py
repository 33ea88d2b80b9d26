"""Webhook delivery rules found by the security campaign (SPEC §17.2 Round 4, issue 29): a 2xx is
delivered whatever its body, a refused URL fails at once, the User-Agent is honest, and a person
holds at most ``TIDDLY_MAX_WEBHOOKS``."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from rest_framework.test import APIClient

from content.models.webhooks import Webhook, WebhookDelivery
from content.tests.webhook_receiver import Receiver
from tiddly import __version__, outbound

pytestmark = pytest.mark.django_db


def _hook(api: APIClient, url: str) -> dict[str, Any]:
    response = api.post("/api/webhooks/", {"url": url}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _note(api: APIClient) -> None:
    assert api.post("/api/notes/", {"title": "n"}, format="json").status_code == 201


def test_a_2xx_with_a_body_over_64_kb_is_delivered(
    api: APIClient, receiver: Receiver, run_tasks: Any
) -> None:
    receiver.secret = _hook(api, receiver.url)["secret"]
    receiver.script = [("big", 200, 200 * 1024)]
    _note(api)
    run_tasks()
    assert len(receiver.received) == 1
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("delivered", 1)
    assert (delivery.last_status_code, delivery.last_error) == (200, None)
    assert Webhook.objects.get().failure_count == 0


def test_a_500_with_a_big_body_is_an_http_error_not_a_size_error(
    api: APIClient, receiver: Receiver, run_tasks: Any
) -> None:
    receiver.secret = _hook(api, receiver.url)["secret"]
    receiver.script = [("big", 500, 200 * 1024)]
    _note(api)
    run_tasks()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.last_status_code, delivery.last_error) == (
        "pending",
        500,
        "HTTP 500",
    )


def test_a_refused_delivery_fails_at_once_without_retries(
    api: APIClient, monkeypatch: Any, run_tasks: Any
) -> None:
    answer = {"address": "93.184.216.34"}

    def fake_getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answer["address"], port))]

    monkeypatch.setattr(outbound.socket, "getaddrinfo", fake_getaddrinfo)
    hook = _hook(api, "http://hooks.example.com/in")
    answer["address"] = "10.0.0.1"  # the host now points inside: the outbound rules refuse it
    _note(api)
    run_tasks()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("failed", 1)
    assert delivery.next_attempt_at is None
    assert (delivery.last_error or "").startswith("refused: hooks.example.com (10.0.0.1)")
    assert run_tasks(due_within=4000) == 0  # no retry was queued
    assert api.get(f"/api/webhooks/{hook['id']}/").json()["failure_count"] == 1


def test_a_connection_failure_is_still_retried(
    api: APIClient, receiver: Receiver, run_tasks: Any
) -> None:
    receiver.secret = _hook(api, receiver.url)["secret"]
    receiver.script = [("close",)]
    _note(api)
    run_tasks()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("pending", 1)
    run_tasks(due_within=10)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 2)


def test_deliveries_name_tiddly_webhooks_and_its_version(
    api: APIClient, receiver: Receiver, run_tasks: Any
) -> None:
    receiver.secret = _hook(api, receiver.url)["secret"]
    _note(api)
    run_tasks()
    (got,) = receiver.received
    assert got.headers["user-agent"] == f"Tiddly-Webhooks/{__version__}"
    assert got.verified


def test_the_capture_user_agent_names_tiddly_without_a_made_up_url() -> None:
    assert outbound.USER_AGENT.split("/") == ["Tiddly", __version__]
    assert "http" not in outbound.USER_AGENT


def test_a_person_holds_at_most_max_webhooks(
    api: APIClient, other_api: APIClient, receiver: Receiver, settings: Any
) -> None:
    settings.TIDDLY_MAX_WEBHOOKS = 3
    for _ in range(3):
        _hook(api, receiver.url)
    response = api.post("/api/webhooks/", {"url": receiver.url}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "validation_error"
    assert "3 webhooks" in body["fields"]["url"][0]
    assert "TIDDLY_MAX_WEBHOOKS" in body["fields"]["url"][0]
    assert Webhook.objects.count() == 3
    _hook(other_api, receiver.url)  # the limit is per person
    first = api.get("/api/webhooks/").json()[0]
    assert api.delete(f"/api/webhooks/{first['id']}/").status_code == 204
    _hook(api, receiver.url)  # room again


def test_the_default_limit_is_20(settings: Any) -> None:
    assert settings.TIDDLY_MAX_WEBHOOKS == 20
