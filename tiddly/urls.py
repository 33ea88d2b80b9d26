"""URL map: /api/ (REST + OpenAPI), /admin/, /mcp/… (MCP servers) and a landing page."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.templatetags.static import static
from django.urls import include, path
from django.views.defaults import page_not_found, server_error
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from tiddly.api import TokenViewSet
from tiddly.root import ApiRootView

tokens = SimpleRouter()
tokens.register("tokens", TokenViewSet, basename="token")


def favicon(request: HttpRequest) -> HttpResponse:
    # Browsers ask for /favicon.ico whatever the page says; answer with the real icon.
    return HttpResponseRedirect(static("tiddly/favicon.svg"))


urlpatterns = [
    path("", TemplateView.as_view(template_name="landing.html"), name="landing"),
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    path("api/", ApiRootView.as_view(), name="api-root"),
    path("api/", include(tokens.urls)),
    path("api/", include("content.api.urls")),
    path("api/", include("prompts.api.urls")),
    path("", include("tiddly.oauth.urls")),
    path("", include("tiddly.account")),
    path("api/", include("content.api.portability")),
    path("", include("mcp_bridge.urls")),
    path("", include("content.pages.urls")),
    path("", include("content.library.urls")),
]


def _wants_json(request: HttpRequest) -> bool:
    return request.path.split("/")[1] in {"api", "mcp"}


def handler404(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse(
            {"error": "not_found", "message": f"No endpoint at {request.path}. See /api/docs/."},
            status=404,
        )
    return page_not_found(request, exception)


def handler500(request: HttpRequest, *args: Any) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse(
            {"error": "server_error", "message": "Internal error; nothing was saved. Retry."},
            status=500,
        )
    return server_error(request)
