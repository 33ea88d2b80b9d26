"""Times as people read them: "3 hours ago" with the exact time on hover (SPEC §9).

``{{ moment|time_ago }}`` renders ``<time datetime="…" title="…">3 hours ago</time>``; the
library and the admin lists both use ``time_html``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.timesince import timesince, timeuntil

register = template.Library()


def in_words(moment: datetime, now: datetime | None = None) -> str:
    now = now or timezone.now()
    if abs(now - moment) < timedelta(minutes=1):
        return "just now"
    if moment > now:
        return "in " + timeuntil(moment, now, depth=1)
    return timesince(moment, now, depth=1) + " ago"


def exact(moment: datetime) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S %Z")


@register.filter
def time_ago(moment: datetime | None) -> SafeString | str:
    return time_html(moment) if moment else "-"


def time_html(moment: datetime) -> SafeString:
    return format_html(
        '<time datetime="{}" title="{}">{}</time>',
        moment.isoformat(),
        exact(moment),
        in_words(moment),
    )
