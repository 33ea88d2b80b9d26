"""The public share pages: ``GET /s/<token>``, ``GET /s/<token>.md`` and "Save a copy" (POST).

No login to read. Every miss (unknown token, revoked link, item in the trash) answers the same 404
page after the same lookups (``services.shared_item``); every answer carries the privacy headers
and strict CSP of ``web.harden`` and counts against the client IP's throttle.
"""

from __future__ import annotations

from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from content.history import Actor
from content.models import Item
from content.pages import web
from content.services import sharing as services
from content.text.markdown_html import markdown_to_html
from tiddly.errors import TiddlyError

SHARE_ACTOR = Actor(source="share-copy")


def _throttled(request: HttpRequest) -> HttpResponse | None:
    wait = web.throttled(request, "share", settings.TIDDLY_SHARE_THROTTLE_PER_MINUTE)
    if wait is None:
        return None
    response = render(
        request,
        "pages/message.html",
        {
            "heading": "Too many requests",
            "message": f"Too many share-page requests from your address. Retry in {wait} s.",
            "kind": "error",
        },
        status=429,
    )
    response["Retry-After"] = str(wait)
    return web.harden(response)


def _missing(request: HttpRequest) -> HttpResponse:
    return web.harden(render(request, "pages/share_missing.html", status=404), private=True)


def _lookup(request: HttpRequest, token: str) -> tuple[Item | None, HttpResponse | None]:
    stop = _throttled(request)
    if stop is not None:
        return None, stop
    item = services.shared_item(token)
    if item is None:
        return None, _missing(request)
    return item, None


def _safe_href(url: str | None) -> str | None:
    # A bookmark's URL is http(s) by the create rules; link it only when it plainly is.
    if url and url.lower().startswith(("http://", "https://")):
        return url
    return None


@require_http_methods(["GET", "HEAD"])
def share_page(request: HttpRequest, token: str) -> HttpResponse:
    item, stop = _lookup(request, token)
    if stop is not None or item is None:
        return stop or _missing(request)
    context: dict[str, Any] = {
        "item": item,
        "heading": str(item),
        "tags": item.tag_names(),
        "url": _safe_href(getattr(item, "url", None)),
        "html": None if item.content_is_template else markdown_to_html(item.content),
        "markdown_path": reverse("share-markdown", args=[token]),
        "copy_path": reverse("share-copy", args=[token]),
        # Its owner has it already: a copy would be a duplicate.
        "can_copy": request.user.is_authenticated and not _owns(request, item),
    }
    return web.harden(render(request, "pages/share.html", context), private=True)


@require_http_methods(["GET", "HEAD"])
def share_markdown(request: HttpRequest, token: str) -> HttpResponse:
    item, stop = _lookup(request, token)
    if stop is not None or item is None:
        return stop or _missing(request)
    response = HttpResponse(item.content or "", content_type="text/markdown; charset=utf-8")
    return web.harden(response, private=True)


@require_http_methods(["GET", "HEAD", "POST"])
def share_copy(request: HttpRequest, token: str) -> HttpResponse:
    """ "Save a copy": GET asks to confirm, the CSRF-checked POST copies the shared item into the
    signed-in visitor's account.

    The confirmation is its own page because the share page says ``Referrer-Policy: no-referrer``,
    under which browsers post forms with ``Origin: null`` — refused by the CSRF check.
    """
    item, stop = _lookup(request, token)
    if stop is not None or item is None:
        return stop or _missing(request)
    share_path = reverse("share-page", args=[token])
    if not request.user.is_authenticated:
        login = f"{reverse(settings.LOGIN_URL)}?next={reverse('share-copy', args=[token])}"
        return _message(request, "Sign in first", "Sign in to save a copy.", login, "Sign in", 401)
    if _owns(request, item):
        return _message(
            request, "Already yours", f"This {item.type_name} is in your account already; "
            "there is nothing to copy.", share_path, "Back to the shared page", 409,
        )  # fmt: skip
    if request.method != "POST":
        context = {"item": item, "heading": str(item), "share_path": share_path,
                   "copy_path": reverse("share-copy", args=[token])}  # fmt: skip
        response = render(request, "pages/share_copy.html", context)
        return web.harden(response, private=True, referrer="same-origin")
    try:
        copy = services.save_copy(owner=cast(User, request.user), item=item, actor=SHARE_ACTOR)
    except TiddlyError as error:
        return _message(
            request, "Not saved", error.message, share_path,
            "Back to the shared page", error.status_code, kind="error",
        )  # fmt: skip
    link = None
    if getattr(request.user, "is_staff", False):
        link = reverse(
            f"admin:{copy._meta.app_label}_{copy._meta.model_name}_change", args=[copy.pk]
        )
    return _message(
        request, "Saved", f"A copy of {copy.label()} is now in your account.", link,
        "Open it in the admin", 201,
    )  # fmt: skip


def _owns(request: HttpRequest, item: Item) -> bool:
    return bool(request.user.is_authenticated and request.user.pk == item.owner_id)


def _message(
    request: HttpRequest,
    heading: str,
    message: str,
    link: str | None,
    link_text: str,
    status: int,
    *,
    kind: str = "",
) -> HttpResponse:
    context = {"heading": heading, "message": message, "link": link, "link_text": link_text}
    context["kind"] = kind
    return web.harden(render(request, "pages/message.html", context, status=status), private=True)
