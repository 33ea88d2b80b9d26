"""A webhook stays within its token's reach (SPEC §17.2, issue 29): it sends only the types its
creating token could read, names only those in ``types``, is managed only by tokens that could
have created it, and never carries content."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from oauth2_provider.models import get_access_token_model
from rest_framework.test import APIClient

from content.models.webhooks import Webhook, WebhookDelivery
from content.tests.webhook_receiver import Receiver
from tiddly.models import ApiToken

pytestmark = pytest.mark.django_db

CONTENT = "content:read content:write"
PROMPTS = "prompts:read prompts:write"


def _api_token(owner: Any, scopes: str) -> APIClient:
    _, plaintext = ApiToken.issue(owner=owner, name=scopes, scopes=scopes)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


def _oauth_token(owner: Any, scopes: str) -> APIClient:
    """An OAuth access token not bound to an MCP server: it serves the REST API (SPEC §8.2)."""
    raw = "tdlo_" + secrets.token_urlsafe(24)
    get_access_token_model().objects.create(
        user=owner, token=raw, expires=timezone.now() + timedelta(hours=1), scope=scopes
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


TOKEN_KINDS = [_api_token, _oauth_token]


def _create(client: APIClient, receiver: Receiver, **extra: Any) -> Any:
    response = client.post("/api/webhooks/", {"url": receiver.url, **extra}, format="json")
    if response.status_code == 201:
        receiver.secret = response.json()["secret"]
    return response


def _write_one_of_each(api: APIClient) -> None:
    assert api.post("/api/notes/", {"title": "N", "content": "secret body"}, format="json")
    api.post("/api/prompts/", {"name": "p1", "content": "Hello"}, format="json")
    api.post("/api/bookmarks/", {"url": "https://e.com/", "capture": False}, format="json")


@pytest.mark.parametrize("kind", TOKEN_KINDS)
def test_a_prompts_only_webhook_gets_only_prompt_changes(
    kind: Any, owner: Any, api: APIClient, receiver: Receiver, run_tasks: Any
) -> None:
    created = _create(kind(owner, PROMPTS), receiver)
    assert created.status_code == 201, created.content
    receiver.secret = created.json()["secret"]
    assert created.json()["types"] == []
    assert Webhook.objects.get().reach == ["prompt"]
    _write_one_of_each(api)
    run_tasks()
    assert [got.body["data"]["type"] for got in receiver.received] == ["prompt"]
    assert WebhookDelivery.objects.count() == 1


@pytest.mark.parametrize("kind", TOKEN_KINDS)
def test_a_content_only_webhook_gets_bookmarks_and_notes_but_no_prompt(
    kind: Any, owner: Any, api: APIClient, receiver: Receiver, run_tasks: Any
) -> None:
    created = _create(kind(owner, CONTENT), receiver)
    assert created.status_code == 201, created.content
    _write_one_of_each(api)
    run_tasks()
    assert sorted(got.body["data"]["type"] for got in receiver.received) == ["bookmark", "note"]


@pytest.mark.parametrize("kind", TOKEN_KINDS)
@pytest.mark.parametrize(
    ("scopes", "types", "beyond"),
    [
        (PROMPTS, ["note"], "note"),
        (CONTENT, ["prompt"], "prompt"),
        (PROMPTS, ["bookmark"], "bookmark"),
    ],
)
def test_types_beyond_the_tokens_reach_are_refused(
    kind: Any, owner: Any, receiver: Receiver, scopes: str, types: list[str], beyond: str
) -> None:
    response = _create(kind(owner, scopes), receiver, types=types)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "validation_error"
    (message,) = body["fields"]["types"]
    assert f"not {beyond}" in message
    assert "read scope" in message
    assert not Webhook.objects.exists()


def test_a_write_only_token_that_reads_nothing_cannot_create_a_webhook(
    owner: Any, receiver: Receiver
) -> None:
    response = _create(_api_token(owner, "prompts:write"), receiver)
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"
    assert "content:read" in response.json()["message"]
    assert not Webhook.objects.exists()


@pytest.mark.parametrize("kind", TOKEN_KINDS)
def test_a_token_that_could_not_have_made_a_webhook_gets_404_for_it(
    kind: Any, owner: Any, api: APIClient, receiver: Receiver
) -> None:
    made = _create(kind(owner, CONTENT), receiver).json()
    everything = _create(api, receiver).json()  # a full token: every type
    prompts_only = kind(owner, PROMPTS)
    for hook in (made, everything):
        for method, path, body in [
            ("get", "", {}),
            ("patch", "", {"url": "https://example.org/x"}),
            ("delete", "", {}),
            ("get", "deliveries/", {}),
            ("post", "ping/", {}),
        ]:
            response = getattr(prompts_only, method)(
                f"/api/webhooks/{hook['id']}/{path}", body, format="json"
            )
            assert response.status_code == 404, (hook, method, path)
            assert response.json()["error"] == "not_found"
    assert prompts_only.get("/api/webhooks/").json() == []
    assert [h["id"] for h in api.get("/api/webhooks/").json()] == [made["id"], everything["id"]]
    assert set(Webhook.objects.values_list("url", flat=True)) == {receiver.url}
    assert not WebhookDelivery.objects.exists()  # no ping was queued


@pytest.mark.parametrize("kind", TOKEN_KINDS)
def test_a_content_token_manages_its_own_webhook_but_not_one_with_prompts(
    kind: Any, owner: Any, api: APIClient, receiver: Receiver
) -> None:
    content = kind(owner, CONTENT)
    own = _create(content, receiver).json()
    full = _create(api, receiver).json()
    assert [h["id"] for h in content.get("/api/webhooks/").json()] == [own["id"]]
    patched = content.patch(f"/api/webhooks/{own['id']}/", {"types": ["note"]}, format="json")
    assert (patched.status_code, patched.json()["types"]) == (200, ["note"])
    refused = content.patch(f"/api/webhooks/{full['id']}/", {"types": ["note"]}, format="json")
    assert refused.status_code == 404
    assert Webhook.objects.get(pk=full["id"]).types == []
    assert content.delete(f"/api/webhooks/{full['id']}/").status_code == 404
    assert content.delete(f"/api/webhooks/{own['id']}/").status_code == 204
    assert list(Webhook.objects.values_list("pk", flat=True)) == [
        Webhook.objects.get(pk=full["id"]).pk
    ]


def test_a_patch_may_not_widen_types_beyond_the_webhooks_reach(
    owner: Any, session_api: APIClient, receiver: Receiver
) -> None:
    hook = _create(_api_token(owner, CONTENT), receiver).json()
    # Even a session (every scope) cannot stretch a content webhook to prompts.
    response = session_api.patch(
        f"/api/webhooks/{hook['id']}/", {"types": ["prompt"]}, format="json"
    )
    assert response.status_code == 400
    assert "not prompt" in response.json()["fields"]["types"][0]
    assert Webhook.objects.get().types == []


def test_a_session_webhook_reaches_every_type(session_api: APIClient, receiver: Receiver) -> None:
    assert _create(session_api, receiver, types=["prompt"]).status_code == 201
    assert Webhook.objects.get().reach == ["bookmark", "note", "prompt"]


def test_the_payload_item_has_no_content_and_no_preview(
    api: APIClient, receiver: Receiver, run_tasks: Any
) -> None:
    receiver.secret = _create(api, receiver).json()["secret"]
    api.post("/api/notes/", {"title": "N", "content": "top secret words"}, format="json")
    run_tasks()
    (got,) = receiver.received
    item = got.body["data"]["item"]
    assert item["title"] == "N"
    assert item["content_length"] == len("top secret words")
    assert not {"content", "content_preview", "content_metadata"} & set(item)
    assert "secret words" not in str(got.body)
