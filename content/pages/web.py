"""What every public page answers with: privacy headers, a strict CSP, a per-IP throttle."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

# No inline script or style anywhere; content images may come from https: (they are the shared
# text's own), everything else only from this site. 'none' for script-src: the pages run no JS.
CSP = "; ".join(
    (
        "default-src 'none'",
        "script-src 'none'",
        "style-src 'self'",
        "img-src 'self' https: data:",
        "form-action 'self'",
        "manifest-src 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    )
)


# The capture page runs one script of this site's (receiving the page from the bookmarklet).
CSP_WITH_OWN_SCRIPTS = CSP.replace("script-src 'none'", "script-src 'self'")


def harden(
    response: HttpResponse,
    *,
    private: bool = False,
    referrer: str = "no-referrer",
    own_scripts: bool = False,
) -> HttpResponse:
    """Headers of share pages (SPEC §17.4) and the capture page.

    Pages with a form post say ``referrer="same-origin"``: under ``no-referrer`` a browser sends
    ``Origin: null`` with every POST, which Django's CSRF check rightly refuses. Other sites still
    get no referrer from them.
    """
    response["Content-Security-Policy"] = CSP_WITH_OWN_SCRIPTS if own_scripts else CSP
    response["Referrer-Policy"] = referrer
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["X-Content-Type-Options"] = "nosniff"
    if private:
        response["Cache-Control"] = "private, no-store"
    return response


def client_ip(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def throttled(request: HttpRequest, scope: str, limit: int, period: int = 60) -> int | None:
    """Count this request against the client IP's window in the shared cache (SPEC §8: every
    throttle holds across worker processes). Returns seconds to wait when over ``limit``."""
    if not settings.TIDDLY_SHARE_THROTTLE_ENABLED:
        return None
    now = time.time()
    window = int(now // period)
    key = f"tiddly:{scope}:{client_ip(request)}:{window}"
    # add() then incr(): atomic on Redis and the database cache; a lost race costs one request.
    if cache.add(key, 1, timeout=period + 1):
        count = 1
    else:
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add() and incr()
            cache.set(key, 1, timeout=period + 1)
            count = 1
    if count > limit:
        return max(1, int((window + 1) * period - now))
    return None
