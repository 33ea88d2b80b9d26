"""Webhooks and their deliveries (SPEC §17.2)."""

from __future__ import annotations

import uuid6
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from content.models.changes import Change


class Webhook(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid6.uuid7, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.TextField()
    # Needed in the clear to sign each attempt; shown to the owner only in the create response.
    secret = models.CharField(max_length=100, editable=False)
    events = models.JSONField(default=list, blank=True)  # change actions; empty = all
    types = models.JSONField(default=list, blank=True)  # item types; empty = all of reach
    # The item types the creating token could read (SPEC §17.2 reach): nothing else is sent,
    # and only a caller who reads all of them may manage the webhook.
    reach = models.JSONField(default=list, blank=True, editable=False)
    active = models.BooleanField(default=True)
    failure_count = models.PositiveIntegerField(default=0)
    disabled_reason = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # The change-feed position (SPEC §17.1) through which this webhook's deliveries are made:
    # set to the feed's end when it is created or re-enabled, moved on by each dispatch.
    fed_xid = models.BigIntegerField(default=0, editable=False)
    fed_change_id = models.BigIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["owner", "active"], name="webhook_owner_active")]

    def __str__(self) -> str:
        return self.url

    def wants(self, change: Change) -> bool:
        return (
            change.item_type in self.reach
            and (not self.events or change.action in self.events)
            and (not self.types or change.item_type in self.types)
        )


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class WebhookDelivery(models.Model):
    """One event for one webhook, tried until delivered or out of retries.

    Its id is the ``webhook-id`` header (``msg_<hex>``): the same on every attempt, so a receiver
    can drop a repeat (delivery is at least once).
    """

    id = models.UUIDField(primary_key=True, default=uuid6.uuid7, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    change = models.ForeignKey(Change, null=True, blank=True, on_delete=models.SET_NULL)
    change_cursor = models.CharField(max_length=200, null=True, blank=True)
    event = models.CharField(max_length=40)
    # The JSON body, fixed at the first attempt so every retry sends the same bytes.
    body = models.TextField(null=True, blank=True)
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True, default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["webhook", "change"],
                condition=Q(change__isnull=False),
                name="delivery_once_per_change",
            )
        ]
        indexes = [
            models.Index(fields=["webhook", "-created_at"], name="delivery_webhook_time"),
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due"),
        ]

    def __str__(self) -> str:
        return f"{self.event} -> {self.webhook_id} ({self.status})"

    @property
    def message_id(self) -> str:
        return f"msg_{self.id.hex}"
