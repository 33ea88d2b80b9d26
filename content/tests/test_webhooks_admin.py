"""Webhooks in the admin (SPEC §17.2): owner-scoped list, secret shown once, deliveries, ping."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from content.models.webhooks import Webhook, WebhookDelivery
from content.services import webhooks
from content.tests.webhook_receiver import Receiver
from tiddly.tasks import run_tasks

pytestmark = pytest.mark.django_db

LIST = "/admin/content/webhook/"
DELIVERIES = "/admin/content/webhookdelivery/"


@pytest.fixture
def public_urls(settings: Any) -> None:
    # Local hooks that are never delivered to (nothing listens on these ports).
    settings.TIDDLY_OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1:9", "127.0.0.1:10"]


def _hook(owner: Any, url: str) -> Webhook:
    return webhooks.create_webhook(owner=owner, url=url)


def test_the_list_shows_only_your_webhooks_and_never_a_secret(
    staff_client: Client, staff: Any, other: Any, public_urls: None
) -> None:
    mine = _hook(staff, "http://127.0.0.1:9/mine")
    theirs = _hook(other, "http://127.0.0.1:10/theirs")
    Webhook.objects.filter(pk=mine.pk).update(
        active=False, failure_count=10, disabled_reason="Disabled after 10 failures"
    )
    WebhookDelivery.objects.create(webhook=mine, event="ping", status="failed")

    page = staff_client.get(LIST)

    assert page.status_code == 200
    html = page.content.decode()
    assert "http://127.0.0.1:9/mine" in html
    assert "/theirs" not in html
    assert "disabled: Disabled after 10 failures" in html
    assert "failed 20" in html  # the last delivery's status and time
    assert mine.secret not in html
    assert theirs.secret not in html
    change = staff_client.get(f"{LIST}{mine.pk}/change/").content.decode()
    assert mine.secret not in change


def test_someone_elses_webhook_and_delivery_pages_are_404(
    staff_client: Client, other: Any, public_urls: None
) -> None:
    theirs = _hook(other, "http://127.0.0.1:10/theirs")
    delivery = WebhookDelivery.objects.create(webhook=theirs, event="ping")

    assert staff_client.get(f"{LIST}{theirs.pk}/change/").status_code == 404
    assert staff_client.get(f"{LIST}{theirs.pk}/delete/").status_code == 404
    assert (
        staff_client.post(f"{LIST}{theirs.pk}/change/", {"url": "http://x.example/"}).status_code
        == 404
    )
    assert staff_client.get(f"{DELIVERIES}{delivery.pk}/change/").status_code == 404
    assert str(delivery.pk) not in staff_client.get(DELIVERIES).content.decode()
    assert Webhook.objects.get(pk=theirs.pk).url == "http://127.0.0.1:10/theirs"


def test_send_ping_queues_a_delivery_through_the_service_and_the_worker_sends_it(
    staff_client: Client, staff: Any, other: Any, receiver: Receiver
) -> None:
    mine = _hook(staff, receiver.url)
    receiver.secret = mine.secret
    theirs = _hook(other, receiver.url)

    response = staff_client.post(
        LIST, {"action": "send_ping", "_selected_action": [mine.pk, theirs.pk]}
    )

    assert response.status_code == 302
    (delivery,) = WebhookDelivery.objects.all()
    assert (delivery.webhook_id, delivery.event, delivery.status) == (mine.pk, "ping", "pending")
    assert receiver.received == []  # queued, not sent inside the admin's request
    run_tasks()
    (got,) = receiver.received
    assert got.verified
    assert got.body["type"] == "ping"
    assert got.body["data"] == {"webhook_id": str(mine.pk)}
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("delivered", 1, 200)
    listed = staff_client.get(DELIVERIES, {"webhook__id__exact": mine.pk}).content.decode()
    assert delivery.message_id in listed
    assert "delivered" in listed


def test_adding_a_webhook_shows_its_secret_once(
    staff_client: Client, staff: Any, public_urls: None
) -> None:
    response = staff_client.post(
        f"{LIST}add/", {"url": "http://127.0.0.1:9/mine", "events": ["created", "purged"]}
    )

    assert response.status_code == 200
    hook = Webhook.objects.get()
    assert (hook.owner, hook.url, hook.events, hook.types) == (
        staff,
        "http://127.0.0.1:9/mine",
        ["created", "purged"],
        [],
    )
    assert hook.secret.startswith("whsec_")
    assert hook.secret in response.content.decode()
    assert hook.secret not in staff_client.get(LIST).content.decode()


def test_adding_a_private_url_is_a_form_error_and_saves_nothing(staff_client: Client) -> None:
    response = staff_client.post(f"{LIST}add/", {"url": "http://10.0.0.1/hook"})

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["url"]
    assert not Webhook.objects.exists()


def test_reenabling_in_the_admin_resets_the_failure_count(
    staff_client: Client, staff: Any, public_urls: None
) -> None:
    hook = _hook(staff, "http://127.0.0.1:9/mine")
    Webhook.objects.filter(pk=hook.pk).update(
        active=False, failure_count=10, disabled_reason="Disabled"
    )

    response = staff_client.post(
        f"{LIST}{hook.pk}/change/", {"url": "http://127.0.0.1:9/mine", "active": "on"}
    )

    assert response.status_code == 302
    hook.refresh_from_db()
    assert (hook.active, hook.failure_count, hook.disabled_reason) == (True, 0, None)


def test_a_superuser_sees_every_webhook(other: Any, public_urls: None) -> None:
    _hook(other, "http://127.0.0.1:10/theirs")
    root = get_user_model().objects.create_superuser("root", password="pw")
    client = Client()
    client.force_login(root)

    assert "/theirs" in client.get(LIST).content.decode()


def test_a_superuser_adds_a_webhook_for_someone_else(other: Any, public_urls: None) -> None:
    root = get_user_model().objects.create_superuser("root", password="pw")
    client = Client()
    client.force_login(root)

    response = client.post(f"{LIST}add/", {"owner": other.pk, "url": "http://127.0.0.1:10/theirs"})

    assert response.status_code == 200
    hook = Webhook.objects.get()
    assert (hook.owner, hook.url) == (other, "http://127.0.0.1:10/theirs")
    assert hook.secret in response.content.decode()


def test_the_admin_keeps_a_token_webhook_within_its_reach(
    staff_client: Client, staff: Any, public_urls: None
) -> None:
    hook = webhooks.create_webhook(
        owner=staff, url="http://127.0.0.1:9/mine", readable=["bookmark", "note"]
    )
    page = staff_client.get(f"{LIST}{hook.pk}/change/").content.decode()
    assert "Reach" in page
    response = staff_client.post(
        f"{LIST}{hook.pk}/change/",
        {"url": "http://127.0.0.1:9/mine", "types": ["prompt"], "active": "on"},
    )
    assert response.status_code == 200  # the form again, with the reason
    assert "may send only the types its token can read" in response.content.decode()
    hook.refresh_from_db()
    assert (hook.types, hook.reach) == ([], ["bookmark", "note"])
