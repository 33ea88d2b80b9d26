"""``/library/…``: the signed-in person's own items in the browser (SPEC §9)."""

from __future__ import annotations

from django.urls import path

from content.library import actions, editing, linking, listing, reading

urlpatterns = [
    path("library/", listing.library_list, name="library"),
    path("library/new/", editing.new_page, name="library-new"),
    path("library/<str:type_name>/<str:pk>/", reading.item_page, name="library-item"),
    path("library/<str:type_name>/<str:pk>/edit/", editing.edit_page, name="library-edit"),
    path("library/<str:type_name>/<str:pk>/history/", reading.history_page, name="library-history"),
    path(
        "library/<str:type_name>/<str:pk>/history/<int:version>/",
        reading.version_page,
        name="library-version",
    ),
    path("library/<str:type_name>/<str:pk>/related/", reading.related_page, name="library-related"),
    path("library/<str:type_name>/<str:pk>/links/", linking.links_page, name="library-links"),
    path(
        "library/<str:type_name>/<str:pk>/<str:action>/", actions.item_action, name="library-action"
    ),
]
