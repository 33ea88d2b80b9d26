"""Tiddly's webhook signatures verify with the Standard Webhooks reference library."""

from __future__ import annotations

import base64
import json

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tiddly import standard_webhooks


def test_a_new_secret_is_whsec_and_standard_base64_of_32_bytes() -> None:
    secret = standard_webhooks.new_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32
    assert secret != standard_webhooks.new_secret()


def test_signed_headers_verify_with_the_standardwebhooks_library() -> None:
    secret = standard_webhooks.new_secret()
    body = json.dumps({"type": "item.created", "data": {"title": "café ✓"}}).encode()
    import time

    headers = standard_webhooks.headers(secret, "msg_abc", int(time.time()), body)
    assert Webhook(secret).verify(body, headers) == json.loads(body)


def test_a_tampered_body_or_another_secret_fails_verification() -> None:
    import time

    secret = standard_webhooks.new_secret()
    body = b'{"type": "ping"}'
    headers = standard_webhooks.headers(secret, "msg_1", int(time.time()), body)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(b'{"type": "pong"}', headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(standard_webhooks.new_secret()).verify(body, headers)
