"""``/library/<type>/<id>/links/``: the item's links and a picker for new ones (SPEC §12), without
JavaScript: a search form (GET) lists the person's own items matching it, each with a "Link"
button that POSTs to the item's ``link`` action — the relationship service REST and MCP use.

The search is the list's keyword search (``queries.content_page`` with ``q``), owner-scoped as
every list is, so another person's items never show; without words it offers the most recently
changed items.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from content import item_types, queries
from content.library import web
from content.library.listing import row
from content.models import Item, SortKey

PICKS = 20


class PickForm(forms.Form):
    q = forms.CharField(required=False, max_length=500, strip=True, label="Find an item to link")


@require_GET
@web.library_view
def links_page(request: HttpRequest, type_name: str, pk: str) -> HttpResponse:
    owner = web.owner_of(request)
    item = queries.get_owned_head(owner, web.ref_of(type_name, pk))
    item = queries.owned(owner, type(item)).defer("content").get(pk=item.pk)
    form = PickForm(request.GET)
    q = form.cleaned_data["q"] if form.is_valid() else ""
    links = queries.related_items(owner, item)
    linked = {(link["type"], link["id"]) for link in links}
    context: dict[str, Any] = {
        "item": item,
        "title": item.display_title() or f"Untitled {item.type_name}",
        "links": links,
        "form": form,
        "q": q,
        "picks": [
            (pick, (pick.item.type_name, str(pick.item.pk)) in linked)
            for pick in _picks(owner, item, q)
        ],
        "here": request.get_full_path(),
    }
    return render(request, "library/links.html", context, status=200 if form.is_valid() else 400)


def _picks(owner: Any, item: Item, q: str) -> list[Any]:
    """The person's active items matching ``q`` (the item itself left out), best first."""
    params = queries.ListParams(q=q, limit=PICKS + 1, sort_by=None if q else SortKey.UPDATED_AT)
    found = queries.content_page(owner, item_types.type_names(), params)
    rows = [
        row(other) for other in found if (other.type_name, other.pk) != (item.type_name, item.pk)
    ]
    return rows[:PICKS]
