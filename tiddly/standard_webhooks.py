"""Standard Webhooks signing (https://www.standardwebhooks.com): secrets, headers, signatures.

A secret is ``whsec_`` + standard base64 (with ``+`` and ``/``) of random bytes; the signature is
``v1,`` + base64(HMAC-SHA256(secret bytes, f"{id}.{timestamp}.{body}")), so any receiver using a
``standardwebhooks`` library verifies what Tiddly sends.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def headers(secret: str, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, msg_id, timestamp, body),
        "Content-Type": "application/json",
    }
