"""Public pages outside /api/ and /admin/: share links (/s/…), the capture page and manifest."""

from __future__ import annotations

from django.urls import path

from content.pages import capture, share

urlpatterns = [
    path("s/<str:token>.md", share.share_markdown, name="share-markdown"),
    path("s/<str:token>/copy", share.share_copy, name="share-copy"),
    path("s/<str:token>", share.share_page, name="share-page"),
    path("capture/", capture.capture_page, name="capture"),
    path("manifest.webmanifest", capture.manifest, name="web-manifest"),
]
