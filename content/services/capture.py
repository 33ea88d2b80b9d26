"""Page capture (SPEC §15): fill a bookmark from its page, in the background or from `page_html`.

`request_capture` marks the bookmark's capture `pending` and enqueues `capture_page` in the same
transaction. The task makes one attempt through `tiddly.outbound`; a transient failure
(timeout, connection error, 429, 5xx) enqueues the next attempt after about 2 s and 10 s, three
attempts in all. It is idempotent: each request has a token, and a task whose token is no longer
the capture's (a newer request) or whose capture is no longer pending does nothing.

A capture fills title/description only where blank and content only where blank (or always with
`replace_content`) — and never a field that changed after the request: the request stores a
fingerprint of each field, compared under the row lock when the capture writes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import uuid
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks import task

from content.errors import BadState, FieldLimitExceeded
from content.history import Actor
from content.models import Bookmark, CaptureStatus, PageCapture
from content.queries import ItemRef
from content.services import items as services
from content.text import page as pages
from content.text.links import safe_links
from tiddly import outbound, sandbox
from tiddly.errors import ValidationFailed
from tiddly.tasks import enqueue

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
RETRY_DELAYS = (2.0, 10.0)  # before the 2nd and the 3rd attempt
PAGE_HTML_MAX_CHARS = 5_000_000
CAPTURE_ACTOR = Actor(source="capture")
_FIELDS = ("title", "description", "content")


def enabled() -> bool:
    return bool(getattr(settings, "TIDDLY_CAPTURE", True))


def _fingerprint(value: str | None) -> str | None:
    if value is None:
        return None
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _reset(bookmark: Bookmark, *, replace_content: bool, fresh: bool = False) -> PageCapture:
    """Start a new capture request for the bookmark (its row lock is held or it was just made:
    ``fresh``, it has no capture row yet)."""
    fields = {
        "status": CaptureStatus.PENDING,
        "requested_at": timezone.now(),
        "finished_at": None,
        "attempts": 0,
        "http_status": None,
        "content_type": "",
        "final_url": "",
        "error": "",
        "replace_content": replace_content,
        "base": {f: _fingerprint(getattr(bookmark, f)) for f in _FIELDS},
        "token": uuid.uuid4(),
    }
    if fresh:
        capture = PageCapture(bookmark=bookmark, **fields)
        capture.save(force_insert=True)
    else:
        capture, _ = PageCapture.objects.update_or_create(bookmark=bookmark, defaults=fields)
    bookmark.capture = capture
    return capture


def request_capture(
    *, bookmark: Bookmark, replace_content: bool = False, fresh: bool = False
) -> PageCapture:
    """Mark the capture pending and queue the fetch of the page, in one transaction (``fresh``:
    the bookmark was made in the caller's transaction and has no capture yet)."""
    with transaction.atomic():
        capture = _reset(bookmark, replace_content=replace_content, fresh=fresh)
        enqueue(capture_page, str(bookmark.pk), str(capture.token))
    return capture


def request_captures(*, bookmarks: list[Bookmark]) -> None:
    """Queue a capture for each of many new bookmarks (an import with capture=true)."""
    if not enabled() or not bookmarks:
        return
    now = timezone.now()
    rows = [
        PageCapture(
            bookmark=b,
            status=CaptureStatus.PENDING,
            requested_at=now,
            base={f: _fingerprint(getattr(b, f)) for f in _FIELDS},
            token=uuid.uuid4(),
        )
        for b in bookmarks
    ]
    PageCapture.objects.bulk_create(rows, batch_size=1000)
    for row in rows:
        enqueue(capture_page, str(row.pk), str(row.token))


def check_page_html(page_html: str) -> None:
    if len(page_html) > PAGE_HTML_MAX_CHARS:
        raise FieldLimitExceeded(
            "page_html",
            len(page_html),
            PAGE_HTML_MAX_CHARS,
            message=f"page_html is {len(page_html)} characters; at most "
            f"{PAGE_HTML_MAX_CHARS} are accepted. Send the page's main part only, or leave "
            "page_html out and let Tiddly fetch the URL.",
        )
    if "\x00" in page_html:
        raise ValidationFailed(
            {"page_html": ["page_html contains NUL bytes; send the page's HTML as text."]}
        )


# --- extraction in a box -----------------------------------------------------------------------


def _extract(func: Any, *args: Any, **kwargs: Any) -> pages.Page:
    """``func`` (a `content.text.page` extractor) in a child process, stopped past
    TIDDLY_EXTRACT_SECONDS or TIDDLY_EXTRACT_MEMORY_MB (`pages.TooComplex`). Never call it with a
    transaction open: a slow page would hold the transaction's locks for as long."""
    seconds = float(settings.TIDDLY_EXTRACT_SECONDS)
    memory_mb = int(settings.TIDDLY_EXTRACT_MEMORY_MB)
    try:
        return sandbox.run(func, *args, seconds=seconds, memory_mb=memory_mb, **kwargs)
    except sandbox.LimitExceeded as exc:
        what = (
            f"took over {seconds:g} s"
            if exc.kind == "time"
            else f"needed over {memory_mb} MB of memory"
        )
        raise pages.TooComplex(
            f"too complex: extracting the page's text {what} and was stopped; the bookmark "
            "keeps its URL and fields — set its content yourself (or send only the page's "
            "main part as page_html)"
        ) from None


def extract_page_html(page_html: str) -> pages.Page | pages.Unreadable:
    """Extract the page a client sent (`page_html`): the page, or why it could not be read."""
    check_page_html(page_html)
    try:
        return _extract(pages.extract_html, page_html)
    except pages.Unreadable as exc:
        return exc


def capture_from_html(*, bookmark: Bookmark, page: pages.Page | pages.Unreadable) -> PageCapture:
    """Record what `extract_page_html` found, in the create's transaction; nothing is fetched."""
    with transaction.atomic():
        capture = _reset(bookmark, replace_content=False)
        capture.attempts = 1
        capture.content_type = "text/html"
        capture.final_url = bookmark.url
        if isinstance(page, pages.Unreadable):
            return _finish(capture, CaptureStatus.FAILED, error=str(page))
        return _apply(capture, page)


# --- the background task ------------------------------------------------------------------------


@task()
def capture_page(bookmark_id: str, token: str) -> None:
    try:
        _capture_page(bookmark_id, token)
    except Exception as exc:  # no limbo: whatever was not planned for still ends the capture
        logger.exception("capture of bookmark %s failed unexpectedly", bookmark_id)
        _give_up(bookmark_id, token, exc)


def _give_up(bookmark_id: str, token: str, exc: Exception) -> None:
    """End a pending capture `failed` after an unplanned error, writing only the fields that
    say so (the ones the capture was about to write may be what failed)."""
    _end_failed(bookmark_id, token, f"an unexpected error ({type(exc).__name__}: {str(exc)[:300]})")


def worker_died(bookmark_id: str, token: str, *, reason: str) -> None:
    """The task queue gave up on this capture's task (its workers kept dying, e.g. out of
    memory): the capture ends `failed` rather than `pending` forever."""
    _end_failed(bookmark_id, token, f"its worker stopping ({reason})")


def _end_failed(bookmark_id: str, token: str, cause: str) -> None:
    try:
        pk, key = uuid.UUID(bookmark_id), uuid.UUID(token)
    except ValueError:
        return
    reason = (
        f"capture failed on {cause}; capture it again later with "
        f"POST /api/bookmarks/{pk}/capture/, or fill the content yourself"
    )
    PageCapture.objects.filter(pk=pk, token=key, status=CaptureStatus.PENDING).update(
        status=CaptureStatus.FAILED, error=reason, finished_at=timezone.now()
    )


def _content_type(value: str) -> str:
    # A server may send any length; the column keeps its first 200 characters.
    return value[: PageCapture._meta.get_field("content_type").max_length]


def _capture_page(bookmark_id: str, token: str) -> None:
    capture = _pending(bookmark_id, token)
    if capture is None:
        return
    attempt = capture.attempts + 1
    PageCapture.objects.filter(pk=capture.pk, token=capture.token).update(attempts=attempt)
    capture.attempts = attempt
    try:
        response = outbound.fetch(capture.bookmark.url)
    except outbound.OutboundError as exc:
        reason = str(exc)
        transient = reason.startswith(("timed out", "connection failed"))
        _failed(capture, reason, transient=transient)
        return
    capture.http_status = response.status
    capture.content_type = _content_type(response.content_type)
    capture.final_url = response.final_url
    if not 200 <= response.status < 300:
        transient = response.status == 429 or response.status >= 500
        _failed(capture, f"HTTP {response.status}", transient=transient)
        return
    try:
        page = _extract(
            pages.extract,
            response.body,
            content_type=response.content_type,
            charset=response.charset,
        )
    except pages.Unsupported as exc:
        _finish_locked(capture, CaptureStatus.SKIPPED, error=str(exc))
        return
    except pages.Unreadable as exc:
        _finish_locked(capture, CaptureStatus.FAILED, error=str(exc))
        return
    with transaction.atomic():
        locked = _pending(bookmark_id, token, lock=True)
        if locked is None:
            return
        for name in ("attempts", "http_status", "content_type", "final_url"):
            setattr(locked, name, getattr(capture, name))
        _apply(locked, page)


def _pending(bookmark_id: str, token: str, *, lock: bool = False) -> PageCapture | None:
    try:
        pk, key = uuid.UUID(bookmark_id), uuid.UUID(token)
    except ValueError:  # a malformed stored task: nothing to do
        return None
    qs = PageCapture.objects.select_related("bookmark").filter(
        pk=pk, token=key, status=CaptureStatus.PENDING
    )
    if lock:
        qs = qs.select_for_update(of=("self",))
    return qs.first()


def _failed(capture: PageCapture, reason: str, *, transient: bool) -> None:
    if transient and capture.attempts < MAX_ATTEMPTS:
        delay = RETRY_DELAYS[min(capture.attempts, len(RETRY_DELAYS)) - 1]
        with transaction.atomic():
            PageCapture.objects.filter(pk=capture.pk, token=capture.token).update(
                error=reason,
                http_status=capture.http_status,
                content_type=capture.content_type,
                final_url=capture.final_url,
            )
            enqueue(capture_page, str(capture.pk), str(capture.token), delay=delay)
        return
    _finish_locked(capture, CaptureStatus.FAILED, error=reason)


def _finish_locked(capture: PageCapture, status: str, *, error: str = "") -> None:
    with transaction.atomic():
        locked = _pending(str(capture.pk), str(capture.token), lock=True)
        if locked is None:
            return
        for name in ("attempts", "http_status", "content_type", "final_url"):
            setattr(locked, name, getattr(capture, name))
        _finish(locked, status, error=error)


def _finish(capture: PageCapture, status: str, *, error: str = "") -> PageCapture:
    capture.status = status
    capture.error = error[:2000]
    capture.finished_at = timezone.now()
    capture.save()
    return capture


def _limit(field: str, value: str) -> str:
    limit = int(settings.TIDDLY_LIMITS[field])
    return value[:limit]


def _apply(capture: PageCapture, page: pages.Page) -> PageCapture:
    """Write what the page gives into the fields the capture may fill (row lock held)."""
    bookmark = (
        Bookmark.objects.select_for_update()
        .filter(pk=capture.pk, deleted_at__isnull=True)
        .only("pk", "owner_id", "title", "description", "content")
        .first()
    )
    if bookmark is None:  # trashed meanwhile: keep it as it is
        return _finish(capture, CaptureStatus.SKIPPED, error="the bookmark is in the trash")
    # Only http, https and mailto links are kept: clients render what REST and MCP hand out.
    content = safe_links(page.content) if page.content else page.content
    found = {"title": page.title, "description": page.description, "content": content}
    data: dict[str, Any] = {}
    for field, value in found.items():
        if not value:
            continue
        current = getattr(bookmark, field)
        if _fingerprint(current) != capture.base.get(field):
            continue  # changed after the capture was requested: theirs wins
        if current and not (field == "content" and capture.replace_content):
            continue
        data[field] = _limit(field, value)
    if data:
        services.update_item(
            owner=bookmark.owner,
            ref=ItemRef(Bookmark, pk=bookmark.pk),
            data=services.item_fields(data),
            actor=CAPTURE_ACTOR,
        )
    error = "" if page.content else "no readable text found on the page (title kept only)"
    return _finish(capture, CaptureStatus.DONE, error=error)


# --- what every create of a bookmark does (registered with the item service) -----------------


def check_create(options: services.CreateOptions) -> services.CreateOptions:
    """Before the create's transaction: refuse a page that cannot be kept, or a page sent with
    ``capture: false`` (two wishes that contradict each other); then extract the page — first,
    so a heavy page costs the create at most the box's limit and holds no lock meanwhile."""
    if options.page_html is None:
        return options
    if options.capture is False:
        message = (
            "page_html and capture: false contradict each other: page_html asks Tiddly to keep "
            "the page's text, capture: false asks it to keep nothing. Leave one of them out."
        )
        raise ValidationFailed({"page_html": [message], "capture": [message]}, message)
    check_page_html(options.page_html)
    if not enabled():
        return options
    return dataclasses.replace(options, prepared=extract_page_html(options.page_html))


def apply_create(bookmark: Bookmark, options: services.CreateOptions) -> Bookmark:
    """What a create does about capture, whichever door it came through (SPEC §15): record the
    `page_html` extracted before the transaction, or queue a fetch when the bookmark came without
    content and `capture` is not false. Runs in the create's transaction."""
    if not enabled():
        return bookmark
    if options.page_html is not None:
        page = options.prepared
        if not isinstance(page, (pages.Page, pages.Unreadable)):  # a caller that skipped check
            page = extract_page_html(options.page_html)
        capture_from_html(bookmark=bookmark, page=page)
        # The capture wrote through its own read of the row.
        return Bookmark.objects.select_related("capture").get(pk=bookmark.pk)
    if options.capture is not False and not bookmark.content:
        request_capture(bookmark=bookmark, fresh=True)
    return bookmark


CREATE_EFFECT = services.CreateEffect(check=check_create, apply=apply_create)


def capture_again(*, owner: Any, ref: ItemRef, replace_content: bool = False) -> Bookmark:
    """`POST /api/bookmarks/{id}/capture/`: a new capture request (the old one is superseded)."""
    if not enabled():
        raise BadState(
            "Page capture is turned off on this server (TIDDLY_CAPTURE=0); an administrator "
            "can turn it on. Set the bookmark's content yourself meanwhile."
        )
    with transaction.atomic():
        bookmark = (
            Bookmark.objects.select_for_update()
            .filter(owner=owner, deleted_at__isnull=True, **ref.lookup())
            .first()
        )
        if bookmark is None:
            raise ref.not_found()
        request_capture(bookmark=bookmark, replace_content=replace_content)
    return bookmark


def preview(url: str) -> dict[str, str | None]:
    """`GET /api/bookmarks/preview/?url=`: the page's title and description, fetched at once."""
    if not enabled():
        raise BadState(
            "Page preview is turned off on this server with page capture (TIDDLY_CAPTURE=0); "
            "an administrator can turn it on. Fill the bookmark's title yourself meanwhile."
        )
    try:
        return _preview(url)
    except (ValidationFailed, BadState):
        raise
    except Exception as exc:  # never a 500: the caller can still save the bookmark
        logger.exception("preview of %s failed unexpectedly", url)
        reason = f"the preview failed on an unexpected error ({type(exc).__name__})"
        raise ValidationFailed({"url": [reason]}, _preview_message(reason)) from None


def _preview(url: str) -> dict[str, str | None]:
    try:
        response = outbound.fetch(url)
    except outbound.OutboundError as exc:
        raise ValidationFailed({"url": [str(exc)]}, _preview_message(str(exc))) from None
    if not 200 <= response.status < 300:
        reason = f"HTTP {response.status}"
        raise ValidationFailed({"url": [reason]}, _preview_message(reason))
    title = description = None
    try:
        # Only what the answer shows: no main-text extraction, no PDF page text.
        page = _extract(
            pages.head, response.body, content_type=response.content_type, charset=response.charset
        )
        title, description = page.title, page.description
    except pages.TooComplex as exc:
        raise ValidationFailed({"url": [str(exc)]}, _preview_message(str(exc))) from None
    except (pages.Unsupported, pages.Unreadable):
        pass  # the type is still worth showing; no title to offer
    return {
        "url": url,
        "final_url": response.final_url,
        "title": title,
        "description": description,
        "content_type": response.content_type or None,
    }


def _preview_message(reason: str) -> str:
    return (
        f"The page could not be previewed: {reason}. Check the URL; you can still save the "
        "bookmark and fill its title yourself."
    )
