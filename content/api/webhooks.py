"""``/api/webhooks/``: webhooks, their deliveries and a ping (SPEC §17.2)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from content import item_types
from content.api.common import owner_of
from content.models.changes import ChangeAction
from content.models.webhooks import DeliveryStatus
from content.services import webhooks
from tiddly.schema import errors
from tiddly.scopes import ANY_AREA, readable_areas
from tiddly.serializers import JSONBooleanField, StrictSerializer, optional_list, validated


class WebhookCreateSerializer(StrictSerializer):
    url = serializers.URLField(max_length=2048, help_text="http(s) URL that receives the POSTs.")
    events = optional_list(
        serializers.CharField(),
        f"Actions to send ({', '.join(ChangeAction.values)}); empty = all.",
        default=list,
    )
    types = optional_list(
        serializers.CharField(),
        f"Item types ({', '.join(item_types.type_names())}); empty = every type this token can "
        "read (it may name only those).",
        default=list,
    )


class WebhookUpdateSerializer(StrictSerializer):
    url = serializers.URLField(max_length=2048, required=False)
    events = serializers.ListField(child=serializers.CharField(), required=False)
    types = serializers.ListField(child=serializers.CharField(), required=False)
    active = JSONBooleanField(
        required=False,
        help_text="true re-enables a disabled webhook (resets failure_count, clears "
        "disabled_reason).",
    )


class WebhookOut(serializers.Serializer):
    id = serializers.UUIDField()
    url = serializers.URLField()
    events = serializers.ListField(child=serializers.CharField())
    types = serializers.ListField(child=serializers.CharField())
    active = serializers.BooleanField()
    failure_count = serializers.IntegerField(help_text="Consecutive failed deliveries.")
    disabled_reason = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class WebhookCreatedOut(WebhookOut):
    secret = serializers.CharField(
        help_text="whsec_…: verify signatures with it. Shown only in this response."
    )


class DeliveryOut(serializers.Serializer):
    id = serializers.UUIDField(help_text="msg_<id without dashes> is the webhook-id header.")
    webhook_id = serializers.UUIDField()
    change_cursor = serializers.CharField(allow_null=True)
    event = serializers.CharField(help_text="item.<action> or ping.")
    status = serializers.ChoiceField(choices=DeliveryStatus.values)
    attempts = serializers.IntegerField()
    last_status_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField(allow_null=True)
    next_attempt_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class PingOut(serializers.Serializer):
    delivery_id = serializers.UUIDField()


def _readable(request: Request) -> list[str]:
    """The item types the caller can read: a webhook it makes may send only those, and it
    manages only webhooks whose types it can all read (SPEC §17.2 reach)."""
    return item_types.types_in(readable_areas(request.auth))


DESCRIPTION = (
    "Each change (§17.1) that matches a webhook's events and types is POSTed to its URL as "
    '`{"type": "item.<action>", "timestamp", "data": {…the change, "item"}}` with Standard '
    "Webhooks headers (webhook-id, webhook-timestamp, webhook-signature v1), from a background "
    "task, at least once: a 2xx within 10 s is delivered; anything else (redirects included) is "
    "retried after each of TIDDLY_WEBHOOK_RETRY_DELAYS seconds, then failed; 10 consecutive "
    "failed deliveries disable the webhook until PATCH active: true. URLs must be public http(s) "
    "(checked at create, on a url change and at every delivery). Needs a write scope. A webhook "
    "sends only the types its creating token could read (`types` may name only those) and is "
    "managed only by tokens that read all of them (others get 404); the item carries "
    "content_length, never its content. At most TIDDLY_MAX_WEBHOOKS (20) per person."
)


@extend_schema_view(
    list=extend_schema(
        summary="List your webhooks", responses={200: WebhookOut(many=True), **errors()}
    ),
    retrieve=extend_schema(summary="Get a webhook", responses={200: WebhookOut, **errors(404)}),
    create=extend_schema(
        summary="Create a webhook (the secret is shown only here)",
        description=DESCRIPTION,
        request=WebhookCreateSerializer,
        responses={201: WebhookCreatedOut, **errors(400)},
    ),
    partial_update=extend_schema(
        summary="Change a webhook's url, events, types or active",
        request=WebhookUpdateSerializer,
        responses={200: WebhookOut, **errors(400, 404)},
    ),
    destroy=extend_schema(summary="Delete a webhook", responses={204: None, **errors(404)}),
)
class WebhookViewSet(viewsets.GenericViewSet):
    serializer_class = WebhookCreateSerializer  # the browsable API form and OPTIONS
    scope_area = ANY_AREA
    scope_access = "write"  # a webhook sends data out: every method needs a write scope

    def get_queryset(self) -> Any:  # the schema generator asks; the services are owner-scoped
        return webhooks.Webhook.objects.none()

    def list(self, request: Request) -> Response:
        hooks = webhooks.owned_webhooks(owner_of(request), _readable(request))
        return Response([webhooks.webhook_body(hook) for hook in hooks])

    def retrieve(self, request: Request, pk: str) -> Response:
        hook = webhooks.get_webhook(owner_of(request), pk, _readable(request))
        return Response(webhooks.webhook_body(hook))

    def create(self, request: Request) -> Response:
        data = validated(WebhookCreateSerializer, request.data)
        hook = webhooks.create_webhook(owner=owner_of(request), readable=_readable(request), **data)
        return Response(webhooks.webhook_body(hook, with_secret=True), status=201)

    def partial_update(self, request: Request, pk: str) -> Response:
        data = validated(WebhookUpdateSerializer, request.data)
        hook = webhooks.update_webhook(
            owner=owner_of(request), webhook_id=pk, data=data, readable=_readable(request)
        )
        return Response(webhooks.webhook_body(hook))

    def destroy(self, request: Request, pk: str) -> Response:
        webhooks.delete_webhook(owner=owner_of(request), webhook_id=pk, readable=_readable(request))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="A webhook's deliveries, newest first (at most 100, kept 30 days)",
        responses={200: DeliveryOut(many=True), **errors(404)},
    )
    @action(detail=True, methods=["get"])
    def deliveries(self, request: Request, pk: str) -> Response:
        hook = webhooks.get_webhook(owner_of(request), pk, _readable(request))
        return Response([webhooks.delivery_body(d) for d in webhooks.recent_deliveries(hook)])

    @extend_schema(
        summary='Send a ping event ({"type": "ping", "data": {"webhook_id"}})',
        request=None,
        responses={202: PingOut, **errors(404)},
    )
    @action(detail=True, methods=["post"])
    def ping(self, request: Request, pk: str) -> Response:
        delivery = webhooks.send_ping(
            owner=owner_of(request), webhook_id=pk, readable=_readable(request)
        )
        return Response({"delivery_id": str(delivery.pk)}, status=status.HTTP_202_ACCEPTED)
