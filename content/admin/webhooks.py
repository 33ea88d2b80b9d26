"""Webhooks in the admin (SPEC §17.2): the owner's webhooks, their deliveries, "Send ping".

Creating and changing go through ``content.services.webhooks`` (the same checks and outbound rules
as REST); the secret is shown once, on the page that answers the add form, and never in a list or
a change form. "Send ping" calls the service the REST ping endpoint calls, so the ping is a queued
delivery like any other. Someone else's webhook or delivery is a 404.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from content import item_types
from content.admin.forms import MONOSPACE
from content.models.changes import ChangeAction
from content.models.webhooks import Webhook, WebhookDelivery
from content.services import webhooks
from tiddly.errors import ValidationFailed
from tiddly.owned_admin import OwnedAdmin


def _type_choices() -> list[tuple[str, str]]:
    return [(name, name) for name in item_types.type_names()]


class WebhookForm(forms.ModelForm):
    events = forms.MultipleChoiceField(
        choices=ChangeAction.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Actions to send; none ticked = all.",
    )
    types = forms.MultipleChoiceField(
        choices=_type_choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Item types to send; none ticked = all.",
    )

    class Meta:
        model = Webhook
        fields = ["url", "events", "types", "active"]
        widgets = {"url": forms.URLInput(attrs={"style": f"width: 40em; {MONOSPACE}"})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "active" in self.fields:
            self.fields[
                "active"
            ].help_text = "Ticking it re-enables a disabled webhook (resets the failure count)."

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        try:
            webhooks.check_webhook(
                url=data["url"],
                events=data.get("events") or [],
                types=data.get("types") or [],
                # A webhook made by a token keeps that token's reach, whoever edits it.
                readable=self.instance.reach if self.instance.pk else None,
            )
        except ValidationFailed as exc:
            for field, msgs in exc.extra.get("fields", {}).items():
                for message in msgs:
                    self.add_error(field if field in self.fields else None, message)
        return data


def _not_found(admin_: admin.ModelAdmin, request: HttpRequest, object_id: str) -> None:
    obj = admin_.get_object(request, unquote(object_id))
    if obj is None or not admin_.has_view_permission(request, obj):
        # the same answer whether it does not exist or is someone else's
        raise Http404(f"No {admin_.opts.verbose_name} with id {object_id!r} among yours.")


class _StrangersGet404(OwnedAdmin):
    """Another person's object (or an unknown id) is a 404 on its change and delete pages, as on
    the REST API — not Django's redirect to the list with a message."""

    def change_view(
        self, request: HttpRequest, object_id: str, *args: Any, **kwargs: Any
    ) -> HttpResponse:
        _not_found(self, request, object_id)
        return super().change_view(request, object_id, *args, **kwargs)

    def delete_view(
        self, request: HttpRequest, object_id: str, *args: Any, **kwargs: Any
    ) -> HttpResponse:
        _not_found(self, request, object_id)
        return super().delete_view(request, object_id, *args, **kwargs)


@admin.register(Webhook)
class WebhookAdmin(_StrangersGet404):
    form = WebhookForm
    list_display = (
        "url",
        "shown_events",
        "shown_types",
        "state",
        "failure_count",
        "last_delivery",
        "deliveries_link",
        "owner",
        "created_at",
    )
    list_filter = ("active",)
    search_fields = ("url",)
    ordering = ("-created_at",)
    actions = ("send_ping", "delete_selected")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        latest = WebhookDelivery.objects.filter(webhook=OuterRef("pk")).order_by("-created_at")
        return (
            super()
            .get_queryset(request)
            .annotate(
                last_delivery_at=Subquery(latest.values("created_at")[:1]),
                last_delivery_status=Subquery(latest.values("status")[:1]),
            )
        )

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            fields = ["url", "events", "types"]
            return ["owner", *fields] if request.user.is_superuser else fields
        return [
            "url",
            "events",
            "types",
            "reach",
            "active",
            "failure_count",
            "disabled_reason",
            "owner",
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [] if obj is None else ["reach", "failure_count", "disabled_reason", "owner"]

    def save_model(self, request: HttpRequest, obj: Webhook, form: Any, change: bool) -> None:
        data = form.cleaned_data
        if not change:
            created = webhooks.create_webhook(
                owner=data.get("owner") or request.user,
                url=data["url"],
                events=data.get("events") or [],
                types=data.get("types") or [],
            )
            obj.pk, obj.secret, obj.owner = created.pk, created.secret, created.owner
            obj.created_at = created.created_at
            return
        editable = ("url", "events", "types", "active")
        fields = {name: data[name] for name in form.changed_data if name in editable}
        webhooks.update_webhook(owner=obj.owner, webhook_id=obj.pk, data=fields)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        pass  # no inlines; the service saved everything

    def response_add(self, request: HttpRequest, obj: Any, post_url_continue: Any = None) -> Any:
        # Admin views are never_cache (no-store), so the page with the secret is not cached.
        return TemplateResponse(
            request,
            "admin/content/webhook/webhook_created.html",
            {
                **self.admin_site.each_context(request),
                "title": "Webhook created",
                "subtitle": None,
                "opts": self.opts,
                "webhook": obj,
                "secret": obj.secret,
                "change_url": reverse("admin:content_webhook_change", args=[obj.pk]),
            },
        )

    @admin.display(description="events")
    def shown_events(self, hook: Webhook) -> str:
        return ", ".join(hook.events) or "all"

    @admin.display(description="types")
    def shown_types(self, hook: Webhook) -> str:
        return ", ".join(hook.types) or "all"

    @admin.display(description="state", ordering="active")
    def state(self, hook: Webhook) -> str:
        if hook.active:
            return "active"
        return f"disabled: {hook.disabled_reason}" if hook.disabled_reason else "disabled"

    @admin.display(description="last delivery")
    def last_delivery(self, hook: Webhook) -> str:
        at = getattr(hook, "last_delivery_at", None)
        if at is None:
            return "-"
        return f"{getattr(hook, 'last_delivery_status', '')} {at:%Y-%m-%d %H:%M:%S}"

    @admin.display(description="deliveries")
    def deliveries_link(self, hook: Webhook) -> str:
        url = reverse("admin:content_webhookdelivery_changelist")
        return format_html('<a href="{}?webhook__id__exact={}">deliveries</a>', url, hook.pk)

    @admin.action(description="Send ping")
    def send_ping(self, request: HttpRequest, qs: QuerySet) -> None:
        count = 0
        for hook in qs:
            webhooks.send_ping(owner=hook.owner, webhook_id=hook.pk)
            count += 1
        messages.success(
            request,
            f"Queued a ping to {count} webhook{'s' if count != 1 else ''}: see its deliveries.",
        )


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(_StrangersGet404):
    """Read-only: each event sent (or being retried) to one of the owner's webhooks."""

    list_display = (
        "event",
        "webhook",
        "status",
        "attempts",
        "last_status_code",
        "webhook_id_header",
        "created_at",
        "next_attempt_at",
        "last_error",
    )
    list_filter = ("status", ("webhook", admin.RelatedOnlyFieldListFilter))
    ordering = ("-created_at",)
    list_select_related = ("webhook",)
    actions = None
    fields = (
        "webhook",
        "event",
        "status",
        "attempts",
        "last_status_code",
        "last_error",
        "webhook_id_header",
        "change_cursor",
        "next_attempt_at",
        "created_at",
        "body",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = admin.ModelAdmin.get_queryset(self, request).select_related("webhook")
        return qs if request.user.is_superuser else qs.filter(webhook__owner=request.user)

    def _may_touch(self, request: HttpRequest, obj: Any) -> bool:
        if not self._is_staff(request):
            return False
        return obj is None or request.user.is_superuser or obj.webhook.owner_id == request.user.pk

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_list_display(self, request: HttpRequest) -> Any:
        return self.list_display

    def get_list_filter(self, request: HttpRequest) -> Any:
        return self.list_filter

    @admin.display(description="webhook-id")
    def webhook_id_header(self, delivery: WebhookDelivery) -> str:
        return delivery.message_id
