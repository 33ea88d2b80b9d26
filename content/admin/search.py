"""The item lists' search box by meaning (SPEC §9, §16): ``?mode=hybrid|semantic``.

The sidebar's "search by" filter sets ``mode``; the search box keeps it (the admin's search form
carries the other parameters along). With a mode and a search term the list shows what
``/api/search/`` ranks for that term — the same query function, over the type's items in the
state and tag picked in the sidebar — best first. Without a mode the box is the plain substring
search. When the embedding provider is down the list falls back to the substring search and
says so.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.views.main import ORDER_VAR, SEARCH_VAR
from django.contrib.auth import get_user_model
from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.http import HttpRequest

from content.errors import SearchUnavailable
from content.models import ItemState
from content.queries import ListParams
from content.search import ranking as ranked

MODES = ("hybrid", "semantic")
RANK = "search_rank"
# The most items a ranked list shows: the keyword leg's depth plus the semantic leg's.
DEPTH = ranked.KEYWORD_DEPTH + ranked.SEMANTIC_DEPTH
HELP = " “Search by” in the sidebar finds by meaning instead (hybrid or semantic)."


class SearchModeFilter(admin.SimpleListFilter):
    """Not a filter: how the search box searches (sets ``mode``; the default is by words)."""

    title = "search by"
    parameter_name = "mode"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            ("hybrid", "Meaning and words (hybrid)"),
            ("semantic", "Meaning only (semantic)"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet | None:
        return None  # the search itself happens in get_search_results

    def choices(self, changelist: Any) -> Any:
        for choice in super().choices(changelist):
            if choice["display"] == "All":
                choice["display"] = "Words (substring)"
            yield choice


def mode_of(request: HttpRequest) -> str | None:
    """The meaning mode of a list request that has a search term, else None."""
    mode = request.GET.get(SearchModeFilter.parameter_name)
    if mode in MODES and request.GET.get(SEARCH_VAR, "").strip():
        return mode
    return None


def by_meaning(request: HttpRequest, queryset: QuerySet, term: str, mode: str) -> QuerySet | None:
    """``queryset`` narrowed to the items ``mode`` ranks for ``term``, annotated with their rank
    (``search_rank``, 0 = best) and ordered by it; None when the provider is down (the caller
    then searches by words)."""
    model = queryset.model
    params = ListParams(
        q=term.strip()[:500],
        tags=[request.GET["tag"]] if request.GET.get("tag") else [],
        views=_views(request.GET.get("state")),
        limit=DEPTH,
        offset=0,
    )
    try:
        found = ranked.ranked_page(_owner(request), [model.type_name], params, mode=mode)
    except SearchUnavailable as exc:
        messages.warning(request, f"{exc} Showing the substring search instead.")
        return None
    if found.degraded:
        messages.warning(
            request, "Search by meaning is unavailable: these are keyword results only."
        )
    if not found.page:
        return queryset.none()
    order = [When(pk=r.item_id, then=Value(i)) for i, r in enumerate(found.page)]
    rank = Case(*order, default=Value(DEPTH), output_field=IntegerField())
    ranked_qs = queryset.filter(pk__in=[r.item_id for r in found.page]).annotate(**{RANK: rank})
    if ORDER_VAR in request.GET:  # a column header was clicked: its order stands
        return ranked_qs
    # The changelist orders before it searches, so the rank order is set here.
    return ranked_qs.order_by(RANK, "-pk")


def _views(state: str | None) -> list[str]:
    if state in ItemState.values:
        return [str(state)]
    if state == "scheduled":
        return [ItemState.ACTIVE]
    return list(ItemState.values)


def _owner(request: HttpRequest) -> Any:
    """Whose items are ranked: the signed-in user's; a superuser's pick in the owner filter."""
    picked = request.GET.get("owner__id__exact")
    if request.user.is_superuser and picked:
        found = get_user_model().objects.filter(pk=picked).first()
        if found is not None:
            return found
    return request.user
