"""The `capture` of a bookmark (SPEC §15): one row per bookmark that was ever captured."""

from __future__ import annotations

from django.db import models


class CaptureStatus(models.TextChoices):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"


class PageCapture(models.Model):
    """Status of the last capture asked for; `bookmark.capture` (absent row = `capture: null`)."""

    bookmark = models.OneToOneField(
        "content.Bookmark", on_delete=models.CASCADE, primary_key=True, related_name="capture"
    )
    status = models.CharField(max_length=10, choices=CaptureStatus.choices, db_index=True)
    requested_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    http_status = models.PositiveIntegerField(null=True, blank=True)
    content_type = models.CharField(max_length=200, blank=True, default="")
    final_url = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")
    # What the request asked for and what the fields were then: a capture writes a field only if
    # it is unchanged since (fingerprints, compared under the row lock when the capture writes).
    replace_content = models.BooleanField(default=False)
    base = models.JSONField(default=dict)
    # Each request gets a new token; a task for an older request finds a different one and stops.
    token = models.UUIDField()

    class Meta:
        verbose_name = "page capture"

    def __str__(self) -> str:
        return f"capture of {self.bookmark_id}: {self.status}"
