"""``{% bookmarklet_href %}``: the capture bookmarklet for this site (the admin index offers it)."""

from __future__ import annotations

from typing import Any

from django import template

from content.pages.capture import bookmarklet, origin_of

register = template.Library()


@register.simple_tag(takes_context=True)
def bookmarklet_href(context: dict[str, Any]) -> str:
    return bookmarklet(origin_of(context["request"]))
