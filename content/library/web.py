"""What every library page shares: sign-in, headers (a strict CSP), the owner's item or a 404."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.cache import never_cache

from content import item_types
from content.history import Actor
from content.models import Item
from content.queries import ItemRef
from tiddly.errors import NotFound, TiddlyError

ACTOR = Actor(source="library")

# Scripts and styles only from this site's static files (no inline ones), images of shared or
# captured text from https:, forms only to this site, never framed.
CSP = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' https: data:",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    )
)

View = Callable[..., HttpResponse]


def harden(response: HttpResponse) -> HttpResponse:
    response["Content-Security-Policy"] = CSP
    response["Referrer-Policy"] = "same-origin"
    response["X-Content-Type-Options"] = "nosniff"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def library_view(view: View) -> View:
    """Signed-in people only (others go to the login page), never cached, the library's headers,
    and a not-found from the read layer (another person's item too) as the site's 404 page."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            response = view(request, *args, **kwargs)
        except NotFound as error:
            raise Http404(error.message) from None
        return harden(response)

    return cast(View, login_required(never_cache(wrapped)))


def owner_of(request: HttpRequest) -> User:
    return cast(User, request.user)


def model_of(type_name: str) -> type[Item]:
    if type_name not in item_types.type_names():
        raise Http404(f"No item type {type_name!r}.")
    return item_types.model_for(type_name)


def ref_of(type_name: str, pk: str) -> ItemRef:
    return ItemRef.by_id(model_of(type_name), pk)


def item_path(item: Item, view: str = "library-item") -> str:
    return reverse(view, args=[item.type_name, item.pk])


def done(request: HttpRequest, message: str, to: str) -> HttpResponse:
    """Post/redirect/get: the outcome as a message on the next page."""
    messages.success(request, message)
    return HttpResponseRedirect(to)


def failed(request: HttpRequest, error: TiddlyError, to: str) -> HttpResponse:
    messages.error(request, f"Nothing was changed: {error.message}")
    return HttpResponseRedirect(to)


def back_to(request: HttpRequest, default: str) -> str:
    """A form's ``next`` when it is a library path (never another site), else ``default``."""
    target = request.POST.get("next") or ""
    if target.startswith("/library/") and not target.startswith("//"):
        return target
    return default
