"""Helpers for the import/export tests: uploads and reading streamed downloads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

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
