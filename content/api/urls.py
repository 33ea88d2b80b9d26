from __future__ import annotations

from django.urls import path
from rest_framework.routers import SimpleRouter

from content.api.changes import ChangesView
from content.api.filters import FilterViewSet
from content.api.relationships import RelationshipViewSet
from content.api.revert import RevertView
from content.api.search import SearchStatusView, SearchView
from content.api.views import BookmarkViewSet, ContentViewSet, NoteViewSet, TagViewSet
from content.api.webhooks import WebhookViewSet

router = SimpleRouter()
router.register("bookmarks", BookmarkViewSet, basename="bookmark")
router.register("notes", NoteViewSet, basename="note")
router.register("content", ContentViewSet, basename="content")
router.register("tags", TagViewSet, basename="tag")
router.register("filters", FilterViewSet, basename="filter")
router.register("relationships", RelationshipViewSet, basename="relationship")
router.register("webhooks", WebhookViewSet, basename="webhook")

urlpatterns = [
    path("history/revert/", RevertView.as_view(), name="history-revert"),
    path("changes/", ChangesView.as_view(), name="changes"),
    path("search/", SearchView.as_view(), name="search"),
    path("search/status/", SearchStatusView.as_view(), name="search-status"),
    *router.urls,
]
