"""``GET /library/``: one list across types or per type, with search, tags, views, saved
filters, sort and paging (SPEC §9).

Without a search the page is ``queries.content_page`` (a UNION of the types' sort columns, then
each type's page rows, tags and captures in one query each; the count comes with the tag chips'
change marker, ``chips.survey``); with one it is the ranked page of ``/api/search/`` (hybrid by
default). Either way a page costs the same few queries whatever the
number of items (a test counts them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse

from content import item_types, queries
from content.errors import SearchUnavailable
from content.library import chips as tag_chips
from content.library import finding, web
from content.models import Item, ItemState
from content.models.organise import SortKey
from content.templatetags.tiddly_time import time_html
from tiddly.errors import TiddlyError

PER_PAGE = 50
TAG_CHIPS = 24
MODES = [("hybrid", "Words and meaning"), ("keyword", "Words"), ("semantic", "Meaning")]
VIEWS = [(ItemState.ACTIVE, "Active"), (ItemState.ARCHIVED, "Archived"),
         (ItemState.DELETED, "Trash")]  # fmt: skip
SORTS = [
    (SortKey.CREATED_AT, "Date saved"),
    (SortKey.UPDATED_AT, "Date changed"),
    (SortKey.LAST_USED_AT, "Last used"),
    (SortKey.TITLE, "Title"),
]


class ListForm(forms.Form):
    q = forms.CharField(required=False, max_length=500, strip=True, label="Search")
    mode = forms.ChoiceField(required=False, choices=MODES, label="Search by")
    type = forms.ChoiceField(required=False, label="Type")
    view = forms.ChoiceField(required=False, choices=VIEWS, label="Show")
    filter = forms.UUIDField(required=False, label="Saved filter")
    sort = forms.ChoiceField(required=False, choices=SORTS, label="Sort by")
    order = forms.ChoiceField(
        required=False, choices=[("desc", "Newest first, Z to A"), ("asc", "Oldest first, A to Z")],
        label="Order",
    )  # fmt: skip
    page = forms.IntegerField(required=False, min_value=1, max_value=100_000)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["type"]).choices = type_choices()

    def value(self, name: str, default: Any = "") -> Any:
        return self.cleaned_data.get(name) or default


def type_choices() -> list[tuple[str, str]]:
    return [("", "All types"), *((n, f"{n.title()}s") for n in item_types.type_names())]


@dataclass
class Row:
    """One line of the list: what the template shows of an item, worked out here (the template
    renders 50 of them: each lookup or filter there costs more than the same work in Python)."""

    item: Item
    title: str
    href: str
    tags: list[str]
    changed: str
    capture: Any = None
    snippet: str = ""


def capture_of(item: Item) -> Any:
    try:
        return getattr(item, "capture", None)
    except ObjectDoesNotExist:
        return None


def row(item: Item, snippet: str = "", *, home: str = "/library/") -> Row:
    return Row(
        item=item,
        title=item.display_title() or f"Untitled {item.type_name}",
        href=f"{home}{item.type_name}/{item.pk}/",  # the ``library-item`` path, without reverse()
        tags=item.tag_names(),
        changed=time_html(item.updated_at),
        capture=capture_of(item),
        snippet=snippet,
    )


@web.library_view
def library_list(request: HttpRequest) -> HttpResponse:
    owner = web.owner_of(request)
    form = ListForm(request.GET)
    context: dict[str, Any] = {"form": form, "rows": [], "total": 0, "views": VIEWS}
    if not form.is_valid():
        return render(
            request, "library/list.html", _page_context(request, form, context), status=400
        )
    types = [form.value("type")] if form.value("type") else item_types.type_names()
    page = form.value("page", 1)
    data = {
        "q": form.value("q"),
        "tags": request.GET.getlist("tag"),
        "tag_match": "all",
        "view": [form.value("view", ItemState.ACTIVE)],
        "sort_by": form.value("sort") or None,
        "sort_order": form.value("order", "desc"),
        "limit": PER_PAGE,
        "offset": (page - 1) * PER_PAGE,
        "filter_id": form.cleaned_data.get("filter"),
    }
    status = 200
    chosen: list[str] = data["tags"]
    home = reverse("library")
    try:
        params = queries.list_params(owner, data)
        chosen = params.tags
        context["survey"] = survey = tag_chips.survey(owner, types, params)
        if params.q:
            found = finding.listed(owner, types, params, mode=form.value("mode", "hybrid"))
            context["rows"] = [
                row(item, match.get("snippet", ""), home=home) for item, _, match in found.items
            ]
            context["total"] = found.count
            if found.degraded:
                messages.warning(request, "Search by meaning is unavailable: these are matches "
                                 "of your words only.")  # fmt: skip
        else:
            items = queries.content_page(owner, types, params)
            context["rows"] = [row(item, home=home) for item in items]
            context["total"] = survey.listed
    except SearchUnavailable as error:
        messages.error(request, error.message)
    except TiddlyError as error:  # a saved filter that is not the person's, a bad tag
        messages.error(request, error.message)
        status = 400
    context.update(page=page, tags=chosen, types=types)
    return render(
        request, "library/list.html", _page_context(request, form, context), status=status
    )


def _page_context(request: HttpRequest, form: ListForm, context: dict[str, Any]) -> dict[str, Any]:
    owner = web.owner_of(request)
    query = request.GET.copy()
    query.pop("page", None)
    chosen = set(context.get("tags", []))
    types = context.get("types") or item_types.type_names()
    survey = context.get("survey") or tag_chips.survey(owner, types)
    chips = [
        {"name": t["name"], "count": t["count"], "on": t["name"] in chosen,
         "href": _toggled(query, t["name"])}
        for t in tag_chips.top_tags(owner, types, TAG_CHIPS, survey.marker)
    ]  # fmt: skip
    known = {c["name"] for c in chips}
    chips += [{"name": n, "count": None, "on": True, "href": _toggled(query, n)}
              for n in sorted(chosen - known)]  # fmt: skip
    page = context.get("page", 1)
    total = context.get("total", 0)
    return {
        **context,
        "chips": chips,
        "filters": list(queries.owned_filters(owner)),
        "type_tabs": _type_tabs(query, form),
        "view_tabs": _view_tabs(query, form),
        "previous": _with(query, page=page - 1) if page > 1 else None,
        "next": _with(query, page=page + 1) if page * PER_PAGE < total else None,
        "first_shown": (page - 1) * PER_PAGE + 1,
        "last_shown": (page - 1) * PER_PAGE + len(context.get("rows", [])),
        "searching": bool(form.is_valid() and form.value("q")),
    }


def _with(query: QueryDict, **changes: Any) -> str:
    copy = query.copy()
    for key, value in changes.items():
        if value in (None, ""):
            copy.pop(key, None)
        else:
            copy[key] = str(value)
    return "?" + copy.urlencode() if copy else "?"


def _toggled(query: QueryDict, tag: str) -> str:
    copy = query.copy()
    tags = copy.getlist("tag")
    copy.setlist("tag", [t for t in tags if t != tag] if tag in tags else [*tags, tag])
    return "?" + urlencode(list(copy.lists()), doseq=True)


def _type_tabs(query: QueryDict, form: ListForm) -> list[dict[str, Any]]:
    current = query.get("type", "")
    return [{"label": label, "href": _with(query, type=value), "on": value == current}
            for value, label in type_choices()]  # fmt: skip


def _view_tabs(query: QueryDict, form: ListForm) -> list[dict[str, Any]]:
    current = query.get("view") or ItemState.ACTIVE
    return [{"label": label, "href": _with(query, view=value), "on": value == current}
            for value, label in VIEWS]  # fmt: skip
