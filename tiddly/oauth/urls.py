"""/oauth/… (authorize, token, revoke, register, login) and the /.well-known/ documents."""

from __future__ import annotations

from django.urls import include, path

from tiddly.oauth import views
from tiddly.oauth.resources import MCP_SCOPES, WELL_KNOWN_RESOURCE

oauth_patterns = [
    path("authorize", views.AuthorizeView.as_view(), name="authorize"),
    path("token", views.TokenView.as_view(), name="token"),
    path("revoke", views.RevokeTokenView.as_view(), name="revoke-token"),
    path("register", views.RegistrationView.as_view(), name="register"),
]

urlpatterns = [
    # The toolkit reverses its own views in this namespace.
    path("oauth/", include((oauth_patterns, "oauth2_provider"))),
    path("oauth/login", views.LoginView.as_view(), name="oauth-login"),
    path(
        ".well-known/oauth-authorization-server",
        views.AuthorizationServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path(
        WELL_KNOWN_RESOURCE.lstrip("/"),
        views.ProtectedResourceMetadataView.as_view(),
        name="oauth-resource-metadata",
    ),
    *(
        path(
            WELL_KNOWN_RESOURCE.lstrip("/") + mount,
            views.ProtectedResourceMetadataView.as_view(mount=mount),
            name=f"oauth-resource-metadata-{mount.rsplit('/', 1)[-1]}",
        )
        for mount in MCP_SCOPES
    ),
]
