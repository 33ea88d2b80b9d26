"""Webhooks (SPEC §17.2) against a real local receiver that verifies signatures."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from content.history.record import Actor
from content.models import Note
from content.models.webhooks import Webhook, WebhookDelivery
from content.services import items, webhooks
from content.tests.webhook_receiver import Receiver
from tiddly import outbound
from tiddly.models import ApiToken
from tiddly.tasks import requeue_interrupted, run_tasks

pytestmark = pytest.mark.django_db


def _hook(api: APIClient, receiver: Receiver, **extra: Any) -> dict[str, Any]:
    response = api.post("/api/webhooks/", {"url": receiver.url, **extra}, format="json")
    assert response.status_code == 201, response.content
    receiver.secret = response.json()["secret"]
    return response.json()


def _note(api: APIClient, title: str = "n") -> dict[str, Any]:
    response = api.post("/api/notes/", {"title": title, "content": "body"}, format="json")
    assert response.status_code == 201
    return response.json()


def test_a_change_is_posted_signed_and_recorded_as_delivered(
    api: APIClient, receiver: Receiver
) -> None:
    hook = _hook(api, receiver)
    assert hook["secret"].startswith("whsec_")
    note = _note(api, "Hello")
    assert receiver.received == []  # never inside the write's request
    run_tasks()  # the delivery (and the search index task)
    (got,) = receiver.received
    assert got.verified
    assert got.body["type"] == "item.created"
    data = got.body["data"]
    assert (data["id"], data["action"], data["version"]) == (note["id"], "created", 1)
    assert data["item"]["title"] == "Hello"
    assert "content" not in data["item"]
    assert data["item"]["content_length"] == 4
    (delivery,) = api.get(f"/api/webhooks/{hook['id']}/deliveries/").json()
    assert delivery["status"] == "delivered"
    assert (delivery["attempts"], delivery["last_status_code"]) == (1, 200)
    assert delivery["change_cursor"] == data["cursor"]
    assert got.headers["webhook-id"] == "msg_" + delivery["id"].replace("-", "")


def test_a_500_is_retried_later_with_the_same_webhook_id(
    api: APIClient, receiver: Receiver
) -> None:
    _hook(api, receiver)
    receiver.script = [("status", 500)]
    _note(api)
    run_tasks()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("pending", 1, "HTTP 500")
    assert delivery.next_attempt_at > timezone.now()
    assert run_tasks() == 0  # not due yet (5 s)
    run_tasks(due_within=10)  # the retry, brought forward
    first, second = receiver.received
    assert first.verified
    assert second.verified
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    assert first.body == second.body
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
    assert Webhook.objects.get().failure_count == 0


def test_a_receiver_that_times_out_fails_the_attempt(
    api: APIClient, receiver: Receiver, monkeypatch: Any
) -> None:
    monkeypatch.setattr(webhooks, "DELIVERY_TIMEOUT_SECONDS", 0.5)
    _hook(api, receiver)
    receiver.script = [("sleep", 2)]
    _note(api)
    run_tasks()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "pending"
    assert delivery.last_error.startswith("timed out")


def test_a_receiver_that_closes_the_connection_fails_the_attempt(
    api: APIClient, receiver: Receiver
) -> None:
    _hook(api, receiver)
    receiver.script = [("close",)]
    _note(api)
    run_tasks()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "pending"
    assert delivery.last_error.startswith("connection failed")


def test_a_redirect_is_not_followed_and_fails(api: APIClient, receiver: Receiver) -> None:
    _hook(api, receiver)
    receiver.script = [("redirect", "http://10.0.0.1/steal")]
    _note(api)
    run_tasks()
    delivery = WebhookDelivery.objects.get()
    assert delivery.last_status_code == 302
    assert delivery.last_error.startswith("HTTP 302 (redirects are not followed")
    assert len(receiver.received) == 1


def test_a_url_that_starts_resolving_to_a_private_address_fails_at_delivery(
    api: APIClient, monkeypatch: Any
) -> None:
    answer = {"address": "93.184.216.34"}

    def fake_getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answer["address"], port))]

    monkeypatch.setattr(outbound.socket, "getaddrinfo", fake_getaddrinfo)
    created = api.post("/api/webhooks/", {"url": "http://hooks.example.com/in"}, format="json")
    assert created.status_code == 201
    answer["address"] = "10.0.0.1"
    _note(api)
    run_tasks()
    delivery = WebhookDelivery.objects.get()
    assert delivery.last_error.startswith("refused: hooks.example.com (10.0.0.1)")
    assert delivery.last_status_code is None


def test_a_worker_killed_mid_delivery_runs_it_again_with_the_same_webhook_id(
    api: APIClient, receiver: Receiver, monkeypatch: Any
) -> None:
    _hook(api, receiver)
    _note(api)
    real_fetch = outbound.fetch

    def fetch_then_die(*args: Any, **kwargs: Any) -> Any:
        real_fetch(*args, **kwargs)
        raise SystemExit("worker killed")

    monkeypatch.setattr(outbound, "fetch", fetch_then_die)
    run_tasks()  # the task's worker dies after the POST, before recording it
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("pending", 1)
    # What a kill -9 leaves behind (the library records the SystemExit as a failure; a killed
    # process records nothing): the task still RUNNING.
    task = DBTaskResult.objects.filter(task_path__endswith=".deliver_many_task")
    assert task.update(status=TaskResultStatus.RUNNING, finished_at=None) == 1
    monkeypatch.setattr(outbound, "fetch", real_fetch)
    assert requeue_interrupted(lease_seconds=0) == 1  # its task outlived its lease
    run_tasks()  # and runs again
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == delivery.message_id
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
    assert WebhookDelivery.objects.count() == 1


def test_a_write_queues_nothing_and_the_dispatch_makes_its_deliveries(
    api: APIClient, receiver: Receiver
) -> None:
    for n in range(3):
        _hook(api, receiver, types=["note"] if n else [])
    before = DBTaskResult.objects.count()
    _note(api)
    # the write appended its change to the feed; nothing for webhooks in its request
    assert DBTaskResult.objects.filter(task_path__contains="webhooks").count() == 0
    assert DBTaskResult.objects.count() == before  # a write queues no task at all
    assert WebhookDelivery.objects.count() == 0
    assert webhooks.dispatch() == 3
    tasks = DBTaskResult.objects.filter(task_path__endswith=".deliver_many_task")
    assert [len(t.args_kwargs["args"][0]) for t in tasks] == [1, 1, 1]  # one per webhook
    assert webhooks.dispatch() == 0  # the position moved on: nothing is made twice
    run_tasks()
    assert len(receiver.received) == 3
    assert {got.headers["webhook-id"] for got in receiver.received} == {
        d.message_id for d in WebhookDelivery.objects.all()
    }
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}


def test_a_dispatch_with_nothing_new_writes_nothing(api: APIClient, receiver: Receiver) -> None:
    hook = _hook(api, receiver)
    _note(api)
    assert webhooks.dispatch() == 1
    position = Webhook.objects.values_list("fed_xid", "fed_change_id").get(pk=hook["id"])
    with CaptureQueriesContext(connection) as queries:
        assert webhooks.dispatch() == 0
    writes = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith("SELECT")]
    assert writes == []  # an idle feed costs each worker loop reads only
    assert Webhook.objects.values_list("fed_xid", "fed_change_id").get(pk=hook["id"]) == position


def test_a_webhook_gets_only_what_changes_after_it_is_made_or_re_enabled(
    api: APIClient, receiver: Receiver
) -> None:
    _note(api, "before the webhook")
    hook = _hook(api, receiver)
    _note(api, "after it")
    run_tasks()
    assert [got.body["data"]["item"]["title"] for got in receiver.received] == ["after it"]
    api.patch(f"/api/webhooks/{hook['id']}/", {"active": False}, format="json")
    _note(api, "while it is off")
    run_tasks()
    api.patch(f"/api/webhooks/{hook['id']}/", {"active": True}, format="json")
    _note(api, "back on")
    run_tasks()
    titles = [got.body["data"]["item"]["title"] for got in receiver.received]
    assert titles == ["after it", "back on"]


def test_a_rolled_back_write_sends_nothing(api: APIClient, receiver: Receiver) -> None:
    hook = _hook(api, receiver)
    owner = Webhook.objects.get(pk=hook["id"]).owner

    def write_then_fail() -> None:
        with transaction.atomic():
            items.create_item(owner=owner, model=Note, data={"title": "x"}, actor=Actor("api"))
            raise RuntimeError("the write fails after its change was logged")

    with pytest.raises(RuntimeError):
        write_then_fail()
    run_tasks()
    assert receiver.received == []
    assert WebhookDelivery.objects.count() == 0


def test_a_dispatch_past_one_task_queues_several(
    api: APIClient, receiver: Receiver, settings: Any
) -> None:
    settings.TIDDLY_TASK_LEASE_SECONDS = 40  # 2 deliveries per task (2 x 10 s <= half of 40 s)
    _hook(api, receiver)
    for n in range(3):
        _note(api, f"n{n}")
    run_tasks()
    assert len(receiver.received) == 3
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}
    tasks = DBTaskResult.objects.filter(task_path__endswith=".deliver_many_task")
    assert sorted(len(t.args_kwargs["args"][0]) for t in tasks) == [1, 2]


def test_deliveries_per_task_stay_within_the_task_lease(settings: Any) -> None:
    assert webhooks.deliveries_per_task() == 10  # the default lease: 300 s
    settings.TIDDLY_TASK_LEASE_SECONDS = 60
    assert webhooks.deliveries_per_task() == 3  # 3 x 10 s timeouts <= half of 60 s
    settings.TIDDLY_TASK_LEASE_SECONDS = 5
    assert webhooks.deliveries_per_task() == 1


def test_one_failing_delivery_does_not_hold_up_the_others_of_its_task(
    api: APIClient, receiver: Receiver, monkeypatch: Any
) -> None:
    _hook(api, receiver)
    for n in range(3):
        _note(api, f"n{n}")
    real_deliver = webhooks.deliver
    asked: list[str] = []

    def deliver(delivery_id: Any) -> str:
        asked.append(str(delivery_id))
        if len(asked) == 1:
            raise RuntimeError("database hiccup")
        return real_deliver(delivery_id)

    monkeypatch.setattr(webhooks, "deliver", deliver)
    run_tasks()
    assert len(receiver.received) == 2
    statuses = {
        str(pk): status for pk, status in WebhookDelivery.objects.values_list("pk", "status")
    }
    assert statuses.pop(asked[0]) == "pending"
    assert set(statuses.values()) == {"delivered"}
    task = DBTaskResult.objects.get(task_path__endswith=".deliver_many_task")
    assert task.status == TaskResultStatus.FAILED  # the error is on record, as for one delivery


def test_ten_consecutive_failed_deliveries_disable_until_patched_active(
    api: APIClient, receiver: Receiver, settings: Any
) -> None:
    settings.TIDDLY_WEBHOOK_RETRY_DELAYS = []
    hook = _hook(api, receiver)
    receiver.script = [("status", 500)] * 10
    for n in range(10):
        _note(api, f"n{n}")
    run_tasks()
    body = api.get(f"/api/webhooks/{hook['id']}/").json()
    assert body["active"] is False
    assert body["failure_count"] == 10
    assert "10 consecutive failed deliveries" in body["disabled_reason"]
    _note(api, "while disabled")
    assert WebhookDelivery.objects.count() == 10  # an inactive webhook gets nothing
    patched = api.patch(f"/api/webhooks/{hook['id']}/", {"active": True}, format="json")
    assert patched.status_code == 200
    assert (patched.json()["failure_count"], patched.json()["disabled_reason"]) == (0, None)


def test_ping_is_accepted_and_sent(api: APIClient, receiver: Receiver) -> None:
    hook = _hook(api, receiver)
    response = api.post(f"/api/webhooks/{hook['id']}/ping/")
    assert response.status_code == 202
    run_tasks()
    (got,) = receiver.received
    assert got.verified
    assert got.body["type"] == "ping"
    assert got.body["data"] == {"webhook_id": hook["id"]}


def test_events_and_types_filter_what_is_sent(api: APIClient, receiver: Receiver) -> None:
    _hook(api, receiver, events=["archived"], types=["note"])
    note = _note(api)
    api.post(f"/api/notes/{note['id']}/archive/")
    api.post("/api/bookmarks/", {"url": "https://e.com/", "capture": False}, format="json")
    run_tasks()
    assert [r.body["type"] for r in receiver.received] == ["item.archived"]


@pytest.mark.parametrize(
    ("body", "field", "needle"),
    [
        ({"url": "http://10.0.0.1/hook"}, "url", "refused:"),
        ({"url": "ftp://example.com/"}, "url", ""),
        ({"url": "https://example.com/", "events": ["exploded"]}, "events", "exploded"),
        ({"url": "https://example.com/", "types": ["tag"]}, "types", "tag"),
    ],
)
def test_bad_webhooks_are_validation_errors_naming_the_reason(
    api: APIClient, body: dict[str, Any], field: str, needle: str, monkeypatch: Any
) -> None:
    response = api.post("/api/webhooks/", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert needle in response.json()["fields"][field][0]
    assert not Webhook.objects.exists()


def test_a_url_change_is_checked(api: APIClient, receiver: Receiver) -> None:
    hook = _hook(api, receiver)
    response = api.patch(
        f"/api/webhooks/{hook['id']}/", {"url": "http://192.168.1.1/x"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["fields"]["url"][0].startswith("refused:")
    assert Webhook.objects.get().url == receiver.url


def test_the_secret_is_shown_only_at_create(api: APIClient, receiver: Receiver) -> None:
    hook = _hook(api, receiver)
    assert "secret" not in api.get(f"/api/webhooks/{hook['id']}/").json()
    assert [h["id"] for h in api.get("/api/webhooks/").json()] == [hook["id"]]
    assert all("secret" not in h for h in api.get("/api/webhooks/").json())


def test_a_stranger_gets_404(api: APIClient, other_api: APIClient, receiver: Receiver) -> None:
    hook = _hook(api, receiver)
    for method, path in [
        ("get", ""),
        ("patch", ""),
        ("delete", ""),
        ("get", "deliveries/"),
        ("post", "ping/"),
    ]:
        response = getattr(other_api, method)(
            f"/api/webhooks/{hook['id']}/{path}", {}, format="json"
        )
        assert response.status_code == 404, (method, path)
    assert other_api.get("/api/webhooks/").json() == []
    assert Webhook.objects.filter(pk=hook["id"]).exists()


def test_anonymous_gets_401(anon: APIClient) -> None:
    assert anon.get("/api/webhooks/").status_code == 401


def test_a_read_only_token_gets_403(owner: Any) -> None:
    _, plaintext = ApiToken.issue(owner=owner, name="ro", scopes="content:read prompts:read")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    response = client.get("/api/webhooks/")
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"


def test_delete_removes_the_webhook(api: APIClient, receiver: Receiver) -> None:
    hook = _hook(api, receiver)
    assert api.delete(f"/api/webhooks/{hook['id']}/").status_code == 204
    assert not Webhook.objects.exists()
