"""Capture from anywhere (SPEC §15): ``/capture/``, its bookmarklet and the web-app manifest.

``/capture/?url=&title=&text=`` is a server-rendered page for any signed-in user (not only staff):
a form that saves the URL as a bookmark through the create service and then lands on it in the
library (``/library/bookmark/<id>/``), or — when the URL is saved already — the existing bookmark. Share sheets often put the link in ``text``; the first http(s)
URL found there is used when ``url`` is empty.
"""

from __future__ import annotations

import json
import re
from typing import Any, cast
from urllib.parse import quote

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from content import rules, services
from content.errors import UrlConflict
from content.history import Actor
from content.models import Bookmark
from content.pages import web
from content.services import capture as capture_service
from tiddly.errors import TiddlyError, ValidationFailed

CAPTURE_ACTOR = Actor(source="capture-page")
_URL_IN_TEXT = re.compile(r"https?://[^\s<>\"']+", re.IGNORECASE)


def first_url(text: str) -> str:
    """The first http(s) URL in shared text ("Look at this https://… via App"), trailing
    sentence punctuation dropped."""
    found = _URL_IN_TEXT.search(text or "")
    return found.group(0).rstrip(".,;:!?)]}") if found else ""


# The bookmarklet runs in the page being saved: it opens the capture page for that page and,
# when the capture page says it is ready, hands it the page as rendered (postMessage needs no
# CORS and no credential in the bookmark). A page over the limit is announced, not sent.
_BOOKMARKLET = """(function(){
var o=ORIGIN,h=document.documentElement.outerHTML,n=new Blob([h]).size,u=location.href;
var w=window.open(o+PATH+'?url='+encodeURIComponent(u)+'&title='+encodeURIComponent(document.title)+'&via=bookmarklet','_blank');
if(!w)return;
function f(e){if(e.source!==w||e.origin!==o||e.data!=='tiddly-capture-ready')return;
window.removeEventListener('message',f);
w.postMessage(n>MAX?{tiddly:'page',url:u,too_large:n}:{tiddly:'page',url:u,html:h},o);}
window.addEventListener('message',f);})();"""


def bookmarklet(origin: str) -> str:
    """A ``javascript:`` URL that opens this site's capture page for the current tab and hands
    it the tab's rendered HTML (at most ``PAGE_HTML_MAX_CHARS`` bytes; larger: the URL alone)."""
    script = (
        _BOOKMARKLET.replace("\n", "")
        .replace("PATH", json.dumps(reverse("capture")))
        .replace("MAX", str(capture_service.PAGE_HTML_MAX_CHARS))
        .replace("ORIGIN", json.dumps(origin))
    )
    return "javascript:" + quote(script, safe="()';,+=/:?&!*._-~")


def origin_of(request: HttpRequest) -> str:
    from django.conf import settings

    return settings.TIDDLY_PUBLIC_URL or f"{request.scheme}://{request.get_host()}"


def _existing(owner: User, url: str) -> Bookmark | None:
    try:
        normalized = rules.normalize_url(url)
    except TiddlyError:
        return None
    return (
        Bookmark.objects.filter(owner=owner, url=normalized, deleted_at__isnull=True)
        .order_by("created_at")
        .first()
    )


def _page(
    request: HttpRequest, template: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    context = {
        **context,
        "bookmarklet": bookmarklet(origin_of(request)),
        "manifest": reverse("web-manifest"),
        "page_html_max": capture_service.PAGE_HTML_MAX_CHARS,
    }
    response = render(request, template, context, status=status)
    # The page opened by the bookmarklet keeps its opener (the tab being saved), which hands it
    # the page; Django's default same-origin opener policy would cut that link.
    response["Cross-Origin-Opener-Policy"] = "unsafe-none"
    return web.harden(response, private=True, referrer="same-origin", own_scripts=True)


def _shown(request: HttpRequest, bookmark: Bookmark, *, saved: bool) -> HttpResponse:
    admin_url = None
    if request.user.is_staff:
        admin_url = reverse("admin:content_bookmark_change", args=[bookmark.pk])
    context = {"bookmark": bookmark, "saved": saved, "admin_url": admin_url,
               "library_url": reverse("library-item", args=["bookmark", bookmark.pk]),
               "tags": bookmark.tag_names()}  # fmt: skip
    return _page(request, "pages/capture_existing.html", context, status=201 if saved else 200)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def capture_page(request: HttpRequest) -> HttpResponse:
    owner = cast(User, request.user)
    source = request.POST if request.method == "POST" else request.GET
    url = (source.get("url") or "").strip() or first_url(source.get("text") or "")
    title = (source.get("title") or "").strip()
    description = (source.get("description") or "").strip()
    if request.method != "POST" and not description:
        # What a share sheet sends besides the link becomes the description to start from.
        text = (source.get("text") or "").strip()
        description = text if text and text != url else ""
    form = {"url": url, "title": title, "description": description,
            "tags": (source.get("tags") or "").strip(),
            "via": (source.get("via") or "").strip()}  # fmt: skip
    # The page as the person's browser rendered it, handed over by the bookmarklet (SPEC §15).
    page_html = request.POST.get("page_html") or None if request.method == "POST" else None
    if url:
        existing = _existing(owner, url)
        if existing is not None:
            return _shown(request, existing, saved=False)
    if request.method != "POST":
        return _page(request, "pages/capture.html", {"form": form, "errors": []})
    data: dict[str, Any] = {"url": url, "title": title or None,
                            "description": description or None,
                            "tags": [t for t in re.split(r"[,\s]+", form["tags"]) if t]}  # fmt: skip
    try:
        bookmark = services.create_item(
            owner=owner,
            model=Bookmark,
            data=services.item_fields(data),
            actor=CAPTURE_ACTOR,
            options=services.CreateOptions(page_html=page_html),
        )
    except UrlConflict:
        # Saved meanwhile (another tab, a double submit): show the one that exists.
        existing = _existing(owner, url)
        if existing is not None:
            return _shown(request, existing, saved=False)
        raise
    except ValidationFailed as error:
        return _page(request, "pages/capture.html", {"form": form, "errors": _messages(error)}, 400)
    except TiddlyError as error:
        return _page(request, "pages/capture.html", {"form": form, "errors": [error.message]}, 400)
    # Saved: the person lands on it in their library (post/redirect/get), where the capture's
    # progress shows.
    kept = "The page as you saw it is kept with it." if page_html else "Its page is being captured."
    messages.success(request, f"Saved to your library. {kept}")
    return HttpResponseRedirect(reverse("library-item", args=["bookmark", bookmark.pk]), status=303)


def _messages(error: ValidationFailed) -> list[str]:
    fields = error.extra.get("fields")
    if isinstance(fields, dict):
        return [f"{name}: {' '.join(map(str, msgs))}" for name, msgs in fields.items()]
    return [error.message]


def manifest(request: HttpRequest) -> HttpResponse:
    """The web-app manifest: installable (over HTTPS), and a share target for phones' share
    sheets, which send ``title``, ``text`` and ``url`` to ``/capture/`` by GET."""
    capture = reverse("capture")
    body = {
        "name": "Tiddly",
        "short_name": "Tiddly",
        "description": "Save links to your Tiddly bookmarks.",
        "id": capture,
        "start_url": capture,
        "scope": "/",
        "display": "standalone",
        "background_color": "#f8f8f8",
        "theme_color": "#264b5d",
        "icons": [{"src": static("tiddly/favicon.svg"), "sizes": "any", "type": "image/svg+xml"}],
        "share_target": {
            "action": capture,
            "method": "GET",
            "params": {"title": "title", "text": "text", "url": "url"},
        },
    }
    return HttpResponse(json.dumps(body, indent=2), content_type="application/manifest+json")
