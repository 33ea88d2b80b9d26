"""Webhooks (SPEC §17.2): managing them, fanning changes out, delivering signed events.

Webhooks follow the change feed (SPEC §17.1), the log every write already appends to in its own
transaction: a write does nothing more for them. Each task worker ``dispatch``es once per loop:
each active webhook's settled changes after its feed position become one ``WebhookDelivery`` row
each (if the webhook wants the change) and their attempts are queued, in the transaction that
moves the position on. So a rolled-back write sends nothing, a committed one is never skipped nor
sent twice (the feed's guarantee), and a crash loses nothing. The attempts (``deliver``) are at
least once: a delivery that has not been seen through to an answer stays pending and is tried
again. Every attempt of one delivery carries the
same ``webhook-id`` and body, signed afresh with its own timestamp.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django_tasks import task

from content import item_types
from content.errors import CursorExpired
from content.history import changes as changelog
from content.models.changes import Change, ChangeAction
from content.models.webhooks import DeliveryStatus, Webhook, WebhookDelivery
from content.shapes import item_data
from tiddly import __version__, outbound, standard_webhooks
from tiddly.errors import Forbidden, NotFound, ValidationFailed
from tiddly.tasks import WEBHOOKS, enqueue, lane_queue

DELIVERY_TIMEOUT_SECONDS = 10.0
MAX_DELIVERIES_PER_TASK = 10
DISABLE_AFTER_FAILURES = 10
PING = "ping"
USER_AGENT = f"Tiddly-Webhooks/{__version__}"

logger = logging.getLogger(__name__)


# --- managing -------------------------------------------------------------------------------------


def _check_url(url: str) -> None:
    try:
        outbound.check_url(url)
    except outbound.OutboundError as exc:
        raise ValidationFailed({"url": [exc.reason]}) from None


def _check_lists(
    events: Sequence[str] | None, types: Sequence[str] | None, reach: Sequence[str]
) -> None:
    problems: dict[str, list[str]] = {}
    unknown = sorted(set(events or ()) - set(ChangeAction.values))
    if unknown:
        problems["events"] = [
            f"Unknown event(s) {', '.join(unknown)}. Valid: {', '.join(ChangeAction.values)} "
            "(empty = all)."
        ]
    unknown = sorted(set(types or ()) - set(item_types.type_names()))
    if unknown:
        problems["types"] = [
            f"Unknown type(s) {', '.join(unknown)}. Valid: {', '.join(item_types.type_names())} "
            "(empty = all)."
        ]
    beyond = [name for name in dict.fromkeys(types or ()) if name not in unknown + list(reach)]
    if beyond and "types" not in problems:
        problems["types"] = [
            f"This webhook may send only the types its token can read ({', '.join(reach)}), "
            f"not {', '.join(beyond)}. Remove {', '.join(beyond)} from types, or create the "
            "webhook with a token that can read them (a read scope: content:read for "
            "bookmarks and notes, prompts:read for prompts)."
        ]
    if problems:
        raise ValidationFailed(problems)


def _reach(readable: Sequence[str] | None) -> list[str]:
    """The item types a webhook made by a caller who can read ``readable`` may send (``None``:
    a session, which reads every type)."""
    return item_types.type_names() if readable is None else list(readable)


def check_webhook(
    *,
    url: str,
    events: Sequence[str] = (),
    types: Sequence[str] = (),
    readable: Sequence[str] | None = None,
) -> None:
    """Every check ``create_webhook`` makes, writing nothing (the admin's form validates first)."""
    _check_lists(events, types, _reach(readable))
    _check_url(url)


def _check_room(owner: Any) -> None:
    """At most ``TIDDLY_MAX_WEBHOOKS`` per person: the owner's row is locked so two concurrent
    creates cannot both take the last place."""
    get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
    limit = settings.TIDDLY_MAX_WEBHOOKS
    if Webhook.objects.filter(owner=owner).count() >= limit:
        raise ValidationFailed(
            {
                "url": [
                    f"You already have {limit} webhooks, the most one person may register "
                    "(TIDDLY_MAX_WEBHOOKS). Delete one you no longer use (DELETE "
                    "/api/webhooks/{id}/), or give one receiver several events and types."
                ]
            }
        )


def _uuid(value: Any) -> uuid.UUID:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        raise NotFound("No such webhook among yours. List them at /api/webhooks/.") from None


NOT_FOUND = (
    "No such webhook among yours that this token may manage. List them at /api/webhooks/ (a "
    "webhook is managed only by tokens that can read every type it may send)."
)


def within_reach(webhook: Webhook, readable: Sequence[str] | None) -> bool:
    """Whether a caller who can read ``readable`` (``None``: a session) could have created
    ``webhook``: it reads every type the webhook may send."""
    return readable is None or set(webhook.reach) <= set(readable)


def owned_webhooks(owner: Any, readable: Sequence[str] | None = None) -> list[Webhook]:
    """The owner's webhooks a caller who can read ``readable`` may see (a person holds at most
    ``TIDDLY_MAX_WEBHOOKS``, so the reach is compared here rather than in SQL)."""
    hooks = Webhook.objects.filter(owner=owner)
    return [hook for hook in hooks if within_reach(hook, readable)]


def get_webhook(owner: Any, webhook_id: Any, readable: Sequence[str] | None = None) -> Webhook:
    webhook = Webhook.objects.filter(owner=owner, pk=_uuid(webhook_id)).first()
    if webhook is None or not within_reach(webhook, readable):
        raise NotFound(NOT_FOUND)
    return webhook


@transaction.atomic
def create_webhook(
    *,
    owner: Any,
    url: str,
    events: Sequence[str] = (),
    types: Sequence[str] = (),
    readable: Sequence[str] | None = None,
) -> Webhook:
    """A new webhook that may send the types ``readable`` names (its creator's read scopes;
    ``None``: a session, every type)."""
    reach = _reach(readable)
    if not reach:
        raise Forbidden(
            "This token can read no item type, so a webhook it creates would have nothing to "
            "send. Use a token with 'content:read' or 'prompts:read' (admin, /api/tokens/ or "
            "`manage.py create_token --scope …`)."
        )
    _check_lists(events, types, reach)
    _check_url(url)
    _check_room(owner)
    start = feed_end(getattr(owner, "pk", owner))
    return Webhook.objects.create(
        owner=owner,
        url=url,
        secret=standard_webhooks.new_secret(),
        fed_xid=start.xid,
        fed_change_id=start.id,
        events=list(dict.fromkeys(events)),
        types=list(dict.fromkeys(types)),
        reach=reach,
    )


@transaction.atomic
def update_webhook(
    *, owner: Any, webhook_id: Any, data: dict[str, Any], readable: Sequence[str] | None = None
) -> Webhook:
    found = Webhook.objects.select_for_update().filter(owner=owner, pk=_uuid(webhook_id))
    webhook = found.first()
    if webhook is None or not within_reach(webhook, readable):
        raise NotFound(NOT_FOUND)
    _check_lists(data.get("events"), data.get("types"), webhook.reach)
    if "url" in data and data["url"] != webhook.url:
        _check_url(data["url"])
        webhook.url = data["url"]
    for field in ("events", "types"):
        if field in data:
            setattr(webhook, field, list(dict.fromkeys(data[field])))
    if data.get("active") is True:
        if not webhook.active:  # what changed while it was off is not sent
            webhook.fed_xid, webhook.fed_change_id = feed_end(webhook.owner_id)
        webhook.active, webhook.failure_count, webhook.disabled_reason = True, 0, None
    elif data.get("active") is False:
        webhook.active = False
    webhook.save()
    return webhook


def delete_webhook(*, owner: Any, webhook_id: Any, readable: Sequence[str] | None = None) -> None:
    get_webhook(owner, webhook_id, readable).delete()


@transaction.atomic
def send_ping(
    *, owner: Any, webhook_id: Any, readable: Sequence[str] | None = None
) -> WebhookDelivery:
    webhook = get_webhook(owner, webhook_id, readable)
    delivery = WebhookDelivery.objects.create(webhook=webhook, event=PING)
    _schedule([delivery.pk], webhook.owner_id)
    return delivery


# --- dispatch: from the change feed to deliveries ---------------------------------------------------

DISPATCH_PAGE = 500
DISPATCH_PAGES = 10


def feed_end(owner_id: Any = None) -> changelog.Position:
    """Where a webhook created or re-enabled now starts: after every change settled so far and
    the newest one it can see (this transaction's own included). A write still running, begun
    before, is not its to send (on PostgreSQL the owner's settled point lags behind while one of
    the owner's writes is open)."""
    through = changelog.settled(owner_id).through
    newest = Change.objects.order_by("-xid", "-id").values_list("xid", "id").first()
    return max(through, changelog.Position(*newest)) if newest else through


def dispatch() -> int:
    """Make the deliveries of every active webhook's new changes and queue their attempts (the
    task workers' poller; at most ``DISPATCH_PAGES`` pages of the feed per webhook a call).
    Returns how many deliveries it made."""
    made = 0
    for hook_id in Webhook.objects.filter(active=True).values_list("pk", flat=True):
        for _ in range(DISPATCH_PAGES):
            count, more = _dispatch_page(hook_id)
            made += count
            if not more:
                break
    return made


def _dispatch_page(hook_id: Any) -> tuple[int, bool]:
    """One page of one webhook's feed: read outside any transaction, then its deliveries, their
    queued attempts and the webhook's new position committed together — unless another worker
    moved the position meanwhile (it did this page). A page with no change of the owner writes
    nothing (other owners' writes move the settled point, not this webhook's work)."""
    hook = Webhook.objects.filter(pk=hook_id, active=True).first()
    if hook is None:
        return 0, False
    since = changelog.Position(hook.fed_xid, hook.fed_change_id)
    page, expired = _feed_page(hook, since)
    if not page.changes and not expired:
        return 0, False
    with transaction.atomic():
        locked = Webhook.objects.select_for_update().filter(
            pk=hook_id, active=True, fed_xid=since.xid, fed_change_id=since.id
        )
        if locked.first() is None:
            return 0, False
        rows = [
            WebhookDelivery(webhook=hook, change=change, event=f"item.{change.action}")
            for change in page.changes
            if hook.wants(change)
        ]
        if rows:
            WebhookDelivery.objects.bulk_create(rows, ignore_conflicts=True)
            made = WebhookDelivery.objects.filter(
                webhook=hook, change__in=page.changes, status=DeliveryStatus.PENDING
            )
            _schedule(list(made.order_by("change_id").values_list("pk", flat=True)), hook.owner_id)
        xid, change_id = page.next_position
        locked.update(fed_xid=xid, fed_change_id=change_id)
    return len(rows), page.has_more


def _feed_page(hook: Webhook, since: changelog.Position) -> tuple[changelog.FeedPage, bool]:
    """The page after ``since`` and whether ``since`` had expired (it is then moved on)."""
    types = item_types.type_names()
    try:
        page = changelog.read_feed(
            owner_id=hook.owner_id, since=since, types=types, limit=DISPATCH_PAGE
        )
    except CursorExpired:  # the workers were off (or the webhook idle) longer than kept
        logger.info("Webhook %s: its position is older than the changes kept", hook.pk)
        page = changelog.read_feed(
            owner_id=hook.owner_id,
            since=changelog.pruned_through(),
            types=types,
            limit=DISPATCH_PAGE,
        )
        return page, True
    return page, False


def deliveries_per_task() -> int:
    """How many deliveries one queued task attempts: up to 10, and few enough that their
    timeouts together stay within half the task lease (a task running past its lease is run
    again by another worker)."""
    lease = settings.TIDDLY_TASK_LEASE_SECONDS
    return max(1, min(MAX_DELIVERIES_PER_TASK, int(lease // (2 * DELIVERY_TIMEOUT_SECONDS))))


def _schedule(delivery_ids: list[Any], owner_id: Any, delay: float = 0) -> None:
    """Queue the attempts in the owner's queue of the webhook lane (owners take turns there, and
    deliveries never wait behind or hold up captures and indexing): one task per
    ``deliveries_per_task()`` deliveries."""
    ids = [str(delivery_id) for delivery_id in delivery_ids]
    size = deliveries_per_task()
    queue = lane_queue(WEBHOOKS, owner_id)
    for start in range(0, len(ids), size):
        enqueue(deliver_many_task, ids[start : start + size], delay=delay, queue=queue)


@task()
def deliver_many_task(delivery_ids: list[str]) -> None:
    """The queue's entry point: one attempt of each delivery (idempotent; see ``deliver``). One
    that raises does not keep the others from their attempt; the task then fails with it. After
    an attempt that failed (a receiver down or slow costs up to 10 s each), the rest go back to
    the end of the owner's queue untried: the other owners' deliveries have their turn first."""
    failed: Exception | None = None
    for n, delivery_id in enumerate(delivery_ids):
        try:
            status = deliver(delivery_id)
        except Exception as exc:  # re-raised once the others had their attempt
            failed = failed or exc
            continue
        rest = delivery_ids[n + 1 :]
        if status == DeliveryStatus.PENDING and rest:
            owner = WebhookDelivery.objects.filter(pk=delivery_id).values_list(
                "webhook__owner_id", flat=True
            )
            _schedule(rest, owner.first())
            break
    if failed is not None:
        raise failed


@task()
def deliver_task(delivery_id: str) -> None:
    """One attempt of one delivery: tasks queued before ``deliver_many_task`` still run."""
    deliver(delivery_id)


# --- delivering -----------------------------------------------------------------------------------


def _body(delivery: WebhookDelivery) -> str:
    if delivery.event == PING:
        payload: dict[str, Any] = {"webhook_id": str(delivery.webhook_id)}
        at = delivery.created_at
    else:
        change = delivery.change
        if change is None:
            raise LookupError("the change of this delivery is gone")
        payload = changelog.change_body(change.owner_id, change)
        delivery.change_cursor = payload["cursor"]
        payload["item"] = _item(change)
        at = change.at
    stamp = at.isoformat().replace("+00:00", "Z")
    return json.dumps({"type": delivery.event, "timestamp": stamp, "data": payload})


def _item(change: Change) -> dict[str, Any] | None:
    if change.action == ChangeAction.PURGED:
        return None
    model = item_types.model_for(change.item_type)
    item = model.objects.filter(pk=change.item_id, owner_id=change.owner_id).first()
    if item is None:
        return None
    # No part of the content leaves in a webhook (SPEC §17.2): its length only.
    data = dict(item_data(item))
    for key in ("content", "content_metadata"):
        data.pop(key, None)
    return data


def _start(delivery_id: Any) -> tuple[WebhookDelivery, Webhook] | None:
    """Claim an attempt: the body fixed, the attempt counted (committed before the request goes
    out, so a worker killed mid-request leaves a pending row that is tried again)."""
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(of=("self",))
            .select_related("webhook", "change")
            .filter(pk=delivery_id, status=DeliveryStatus.PENDING)
            .first()
        )
        if delivery is None:
            return None
        if not delivery.webhook.active:
            _finish(delivery, ok=False, code=None, error="the webhook is disabled")
            return None
        if delivery.body is None:
            try:
                delivery.body = _body(delivery)
            except LookupError as exc:
                _finish(delivery, ok=False, code=None, error=str(exc), final=True)
                return None
        delivery.attempts += 1
        delivery.save(update_fields=["body", "change_cursor", "attempts"])
        return delivery, delivery.webhook


def deliver(delivery_id: Any) -> str:
    """One attempt of one delivery (idempotent: a delivered or failed one is left alone).
    Returns the delivery's status afterwards."""
    claimed = _start(delivery_id)
    if claimed is None:
        return "skipped"
    delivery, webhook = claimed
    body = (delivery.body or "").encode()
    headers = standard_webhooks.headers(webhook.secret, delivery.message_id, int(time.time()), body)
    headers["User-Agent"] = USER_AGENT
    code: int | None = None
    final = False
    try:
        # Only the status counts: the receiver's body is never read, whatever its size.
        response = outbound.fetch(
            webhook.url,
            method="POST",
            headers=headers,
            body=body,
            follow_redirects=False,
            timeout=DELIVERY_TIMEOUT_SECONDS,
            read_body=False,
        )
    except outbound.OutboundError as exc:
        error: str | None = exc.reason
        # The outbound rules refused the URL (a private address, a host not allowed): a policy
        # answer that a retry would only repeat, so the delivery fails at once.
        final = exc.reason.startswith("refused:")
    except Exception as exc:  # no limbo: an unplanned failure is retried, then failed
        error = f"connection failed: unexpected error ({type(exc).__name__}: {str(exc)[:300]})"
    else:
        code = response.status
        error = None if 200 <= code < 300 else _http_error(code)
    with transaction.atomic():
        locked = WebhookDelivery.objects.select_for_update(of=("self",)).select_related("webhook")
        current = locked.filter(pk=delivery.pk, status=DeliveryStatus.PENDING).first()
        if current is None:
            return "skipped"
        return _finish(current, ok=error is None, code=code, error=error, final=final)


def _http_error(code: int) -> str:
    if 300 <= code < 400:
        return f"HTTP {code} (redirects are not followed: point the webhook at the final URL)"
    return f"HTTP {code}"


def _finish(
    delivery: WebhookDelivery, *, ok: bool, code: int | None, error: str | None, final: bool = False
) -> str:
    delivery.last_status_code, delivery.last_error = code, error
    webhook = Webhook.objects.select_for_update().get(pk=delivery.webhook_id)
    delays = settings.TIDDLY_WEBHOOK_RETRY_DELAYS
    if ok:
        delivery.status, delivery.next_attempt_at = DeliveryStatus.DELIVERED, None
        webhook.failure_count = 0
    elif not final and webhook.active and delivery.attempts <= len(delays):
        wait = delays[delivery.attempts - 1]
        delivery.next_attempt_at = timezone.now() + timedelta(seconds=wait)
        _schedule([delivery.pk], webhook.owner_id, delay=wait)
    else:
        delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
        webhook.failure_count += 1
        if webhook.failure_count >= DISABLE_AFTER_FAILURES and webhook.active:
            webhook.active = False
            webhook.disabled_reason = (
                f"Disabled after {webhook.failure_count} consecutive failed deliveries (last: "
                f"{error}). Fix the receiver, then PATCH active: true."
            )
    delivery.save()
    webhook.save(update_fields=["failure_count", "active", "disabled_reason"])
    return str(delivery.status)


def prune_deliveries() -> int:
    cutoff = timezone.now() - timedelta(days=settings.TIDDLY_WEBHOOK_DELIVERY_DAYS)
    deleted, _ = WebhookDelivery.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def recent_deliveries(webhook: Webhook) -> list[WebhookDelivery]:
    return list(webhook.deliveries.order_by("-created_at", "-id")[:100])


def webhook_body(webhook: Webhook, *, with_secret: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": str(webhook.id),
        "url": webhook.url,
        "events": list(webhook.events),
        "types": list(webhook.types),
        "active": webhook.active,
        "failure_count": webhook.failure_count,
        "disabled_reason": webhook.disabled_reason,
        "created_at": webhook.created_at.isoformat().replace("+00:00", "Z"),
    }
    if with_secret:
        body["secret"] = webhook.secret
    return body


def delivery_body(delivery: WebhookDelivery) -> dict[str, Any]:
    def stamp(value: Any) -> str | None:
        return value.isoformat().replace("+00:00", "Z") if value else None

    return {
        "id": str(delivery.id),
        "webhook_id": str(delivery.webhook_id),
        "change_cursor": delivery.change_cursor,
        "event": delivery.event,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "last_status_code": delivery.last_status_code,
        "last_error": delivery.last_error,
        "next_attempt_at": stamp(delivery.next_attempt_at),
        "created_at": stamp(delivery.created_at),
    }
