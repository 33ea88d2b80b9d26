"""Helpers for the import/export tests: uploads and reading streamed downloads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from tiddly.models import ApiToken

FIXTURES = Path(__file__).parent / "fixtures" / "netscape"


def upload(api: Any, data: bytes | str, name: str = "bookmarks.html", **fields: Any) -> Any:
    raw = data.encode() if isinstance(data, str) else data
    body = {"file": SimpleUploadedFile(name, raw), **fields}
    return api.post(reverse("import"), body, format="multipart")


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def download(api: Any, **params: Any) -> Any:
    response = api.get(reverse("export"), params)
    if response.streaming:
        response.body = b"".join(response.streaming_content)
    return response


def scoped_client(user: Any, *scopes: str) -> APIClient:
    """An API client whose token holds only ``scopes``."""
    _, plaintext = ApiToken.issue(owner=user, name="scoped", scopes=" ".join(scopes))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client
