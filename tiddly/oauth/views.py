"""Tiddly's authorization server around django-oauth-toolkit (SPEC §8.2).

django-oauth-toolkit does the OAuth itself: the authorization endpoint (with the RFC 8707
``resource`` binding), the token endpoint with rotating refresh tokens, revocation. Written here:

- the discovery documents, because their contents are Tiddly's own — a per-MCP-server resource
  with that server's two scopes (RFC 9728), and an issuer that follows ``TIDDLY_PUBLIC_URL``
  (RFC 8414);
- dynamic client registration (RFC 7591), because its rules are Tiddly's: anonymous but
  throttled, redirect URIs only ``https`` or ``http`` on a loopback host, a capped list, and no
  RFC 7592 registration access tokens (which the toolkit would store as never-expiring tokens);
- the consent page in the admin's look, refusing resources that are not Tiddly's.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.contrib import admin
from django.contrib.auth.views import LoginView as DjangoLoginView
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.urls import reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider import views as dot_views
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import get_access_token_model, get_application_model
from oauth2_provider.views import AuthorizationView
from oauth2_provider.views.metadata import OAuthProtectedResourceMetadataView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from tiddly.models import OAuthClientScope
from tiddly.oauth import resources
from tiddly.scopes import ALL_SCOPES, DESCRIPTIONS, invalid_scopes, scope_string

GRANT_TYPES = ["authorization_code", "refresh_token"]
AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
MAX_REGISTRATION_BYTES = 64 * 1024
MAX_URI_LENGTH = 2000


def _endpoint(request: HttpRequest, name: str) -> str:
    return resources.public_base(request) + reverse(f"oauth2_provider:{name}")


def _json(data: dict[str, Any], status: int = 200, **headers: str) -> JsonResponse:
    response = JsonResponse(data, status=status)
    # Discovery and registration are called from browser-based clients too (MCP Inspector).
    response["Access-Control-Allow-Origin"] = "*"
    response["Cache-Control"] = "no-store"
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


# --- token, revocation and authorization endpoints ----------------------------------------------


class RefuseNul:
    """A parameter with a NUL byte is an RFC 6749 ``invalid_request`` before the toolkit looks it
    up: PostgreSQL cannot even be queried with one (psycopg raises, which was a 500)."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        params = [*request.GET.lists(), *(request.POST.lists() if request.method == "POST" else [])]
        if any("\x00" in key or any("\x00" in v for v in values) for key, values in params):
            return _json(
                {
                    "error": "invalid_request",
                    "error_description": "Request parameters must not contain NUL bytes.",
                },
                status=400,
                **{"Cache-Control": "no-store"},
            )
        return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]


@method_decorator(csrf_exempt, name="dispatch")
class RevokeTokenView(RefuseNul, dot_views.RevokeTokenView):
    pass


@method_decorator(csrf_exempt, name="dispatch")
class TokenView(RefuseNul, dot_views.TokenView):
    """The toolkit's token endpoint, answering only the grants Tiddly offers (RFC 8414 metadata).

    The toolkit's endpoint also dispatches device-code and other grants; a device-code request
    without a ``device_code`` raised a KeyError (a 500). Anything else is the RFC 6749 §5.2
    ``unsupported_grant_type`` before the toolkit sees it.
    """

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.POST.get("grant_type") not in GRANT_TYPES:
            return _json(
                {
                    "error": "unsupported_grant_type",
                    "error_description": "This server issues tokens for the grant types "
                    f"{', '.join(GRANT_TYPES)} only.",
                },
                status=400,
                **{"Cache-Control": "no-store"},
            )
        return super().post(request, *args, **kwargs)


# --- discovery ----------------------------------------------------------------------------------


class AuthorizationServerMetadataView(View):
    """RFC 8414 metadata: the issuer is the server's base URL."""

    def get(self, request: HttpRequest) -> JsonResponse:
        return _json(
            {
                "issuer": resources.public_base(request),
                "authorization_endpoint": _endpoint(request, "authorize"),
                "token_endpoint": _endpoint(request, "token"),
                "registration_endpoint": _endpoint(request, "register"),
                "revocation_endpoint": _endpoint(request, "revoke-token"),
                "scopes_supported": list(ALL_SCOPES),
                "response_types_supported": ["code"],
                "grant_types_supported": GRANT_TYPES,
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": AUTH_METHODS,
                "revocation_endpoint_auth_methods_supported": AUTH_METHODS,
            }
        )


class ProtectedResourceMetadataView(OAuthProtectedResourceMetadataView):
    """RFC 9728 metadata of one resource: an MCP server (``mount``) or the REST API (``""``)."""

    mount = ""

    def get_resource(self, request: HttpRequest) -> str:
        return resources.public_base(request) + self.mount

    def get_authorization_servers(self, request: HttpRequest) -> list[str]:
        return [resources.public_base(request)]

    def get_scopes_supported(self) -> list[str]:
        return list(resources.scopes_for(self.mount))

    def get_resource_name(self) -> str:
        return {
            "/mcp/content": "Tiddly content MCP server (bookmarks and notes)",
            "/mcp/prompts": "Tiddly prompt MCP server (prompt templates)",
        }.get(self.mount, "Tiddly REST API")


# --- dynamic client registration (RFC 7591) -------------------------------------------------------


class RegistrationError(Exception):
    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


@method_decorator(csrf_exempt, name="dispatch")
class RegistrationView(View):
    http_method_names = ["post", "options"]

    def post(self, request: HttpRequest) -> HttpResponse:
        wait = _registration_throttle(request)
        if wait:
            return _json(
                {
                    "error": "slow_down",
                    "error_description": f"Too many registrations; retry in {wait} seconds.",
                },
                status=429,
                Retry_After=str(wait),
            )
        try:
            metadata = _client_metadata(request)
            application, secret = _register(metadata)
        except RegistrationError as exc:
            return _json({"error": exc.error, "error_description": exc.description}, status=400)
        return _json(_registration_response(application, secret, metadata), status=201)

    def http_method_not_allowed(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        response = _json(
            {"error": "invalid_request", "error_description": "POST client metadata as JSON."},
            status=405,
        )
        response["Allow"] = "POST"
        return response


def _registration_throttle(request: HttpRequest) -> int:
    """Seconds to wait when this address registered too often this hour, else 0."""
    hour = int(time.time() // 3600)
    key = f"tiddly:oauth:register:{request.META.get('REMOTE_ADDR', '')}:{hour}"
    cache.add(key, 0, 3600)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        count = 1
    if count > settings.TIDDLY_OAUTH_REGISTRATIONS_PER_HOUR:
        return (hour + 1) * 3600 - int(time.time())
    return 0


def _client_metadata(request: HttpRequest) -> dict[str, Any]:
    if int(request.META.get("CONTENT_LENGTH") or 0) > MAX_REGISTRATION_BYTES:
        raise RegistrationError("invalid_client_metadata", "The client metadata is too large.")
    try:
        data = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        raise RegistrationError(
            "invalid_client_metadata", "The body must be a JSON object of client metadata."
        ) from None
    if not isinstance(data, dict):
        raise RegistrationError(
            "invalid_client_metadata", "The body must be a JSON object of client metadata."
        )
    _reject_bad_text(data)
    return data


def _reject_bad_text(value: Any) -> None:
    """NUL bytes and lone surrogates cannot be stored (PostgreSQL): refuse them up front."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise RegistrationError(
                "invalid_client_metadata", "Text must be valid Unicode."
            ) from None
        if "\x00" in value:
            raise RegistrationError("invalid_client_metadata", "Text must not contain NUL bytes.")
    elif isinstance(value, dict):
        for key, item in value.items():
            _reject_bad_text(key)
            _reject_bad_text(item)
    elif isinstance(value, list):
        for item in value:
            _reject_bad_text(item)


def _string_list(data: dict[str, Any], name: str, default: list[str]) -> list[str]:
    value = data.get(name, default)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RegistrationError("invalid_client_metadata", f"{name} must be an array of strings.")
    return value


def _redirect_uris(data: dict[str, Any]) -> list[str]:
    value = data.get("redirect_uris")
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise RegistrationError(
            "invalid_redirect_uri", "redirect_uris must be a non-empty array of URI strings."
        )
    limit = settings.TIDDLY_OAUTH_MAX_REDIRECT_URIS
    if len(value) > limit:
        raise RegistrationError("invalid_redirect_uri", f"At most {limit} redirect_uris.")
    for uri in value:
        _check_redirect_uri(uri)
    return value


def _check_redirect_uri(uri: str) -> None:
    problem = _redirect_uri_problem(uri)
    if problem:
        raise RegistrationError("invalid_redirect_uri", f"{uri[:200]!r}: {problem}")


def _redirect_uri_problem(uri: str) -> str | None:
    if len(uri) > MAX_URI_LENGTH or any(c.isspace() for c in uri):
        return "not a valid URI."
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        return "not a valid URI."
    if parts.fragment or "#" in uri:
        return "a redirect URI must not have a fragment."
    if not parts.hostname or parts.username or parts.password:
        return "a redirect URI needs a host (and no user info)."
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return None
    return "redirect URIs must use https, or http on a loopback host (127.0.0.1, localhost, [::1])."


def _register(data: dict[str, Any]) -> tuple[Any, str | None]:
    redirect_uris = _redirect_uris(data)
    grant_types = _string_list(data, "grant_types", ["authorization_code"])
    if "authorization_code" not in grant_types or set(grant_types) - set(GRANT_TYPES):
        raise RegistrationError(
            "invalid_client_metadata",
            "grant_types must be authorization_code (optionally with refresh_token).",
        )
    if set(_string_list(data, "response_types", ["code"])) != {"code"}:
        raise RegistrationError("invalid_client_metadata", 'response_types must be ["code"].')
    method = data.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        raise RegistrationError(
            "invalid_client_metadata",
            f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}.",
        )
    name = data.get("client_name", "")
    if not isinstance(name, str) or len(name) > 255:
        raise RegistrationError("invalid_client_metadata", "client_name must be a short string.")
    scope = data.get("scope", "")
    if not isinstance(scope, str) or invalid_scopes(scope.split()):
        raise RegistrationError(
            "invalid_client_metadata", f"scope must be among: {' '.join(ALL_SCOPES)}."
        )
    Application = get_application_model()
    application = Application(
        user=None,
        name=name.strip(),
        client_type="public" if method == "none" else "confidential",
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=" ".join(redirect_uris),
        registration_source=Application.RegistrationSource.DCR,
    )
    secret = application.client_secret if method != "none" else None
    try:
        application.full_clean()
    except ValidationError as exc:
        raise RegistrationError("invalid_client_metadata", " ".join(exc.messages)) from None
    with transaction.atomic():
        application.save()
        if scope.split():  # the most this client can ever be granted (tiddly.oauth.validator)
            OAuthClientScope.objects.create(
                application=application, scope=scope_string(scope.split())
            )
    return application, secret


def _registration_response(
    application: Any, secret: str | None, data: dict[str, Any]
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "client_id": application.client_id,
        "client_id_issued_at": int(application.created.timestamp()),
        "client_name": application.name,
        "redirect_uris": application.redirect_uris.split(),
        "grant_types": GRANT_TYPES,
        "response_types": ["code"],
        "token_endpoint_auth_method": data.get("token_endpoint_auth_method", "client_secret_basic"),
    }
    registered = OAuthClientScope.objects.filter(application=application).first()
    if registered is not None:
        body["scope"] = registered.scope
    if secret is not None:
        body["client_secret"] = secret
        body["client_secret_expires_at"] = 0
    return body


# --- consent -----------------------------------------------------------------------------------


def _invalid_target(uri: str, redirect_uri: str, state: str | None) -> OAuthToolkitError:
    return OAuthToolkitError(
        error=CustomOAuth2Error(
            error="invalid_target",
            description=f"{uri} is not a resource of this server.",
            state=state,
        ),
        redirect_uri=redirect_uri,
    )


# RFC 7636 §4.2: a code_challenge is 43 to 128 characters of the unreserved URL alphabet (the
# grant stores at most 128; a longer one was a database error on PostgreSQL).
PKCE_CHALLENGE = re.compile(r"[A-Za-z0-9._~-]{43,128}")


def _bad_challenge(challenge: str | None, redirect_uri: str, state: str | None) -> Any:
    if challenge is None or PKCE_CHALLENGE.fullmatch(challenge):
        return None
    return OAuthToolkitError(
        error=CustomOAuth2Error(
            error="invalid_request",
            description="code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ "
            "(RFC 7636): the base64url SHA-256 of the code_verifier, without padding.",
            state=state,
        ),
        redirect_uri=redirect_uri,
    )


def with_issuer(uri: str, issuer: str) -> str:
    """``uri`` with ``iss`` added to its query (RFC 9207: the client checks who answered)."""
    parts = urlsplit(uri)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "iss"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("iss", issuer)])))


def _approved_before(user: Any, client_id: str, scopes: list[str], wanted: list[str]) -> bool:
    """Whether ``user`` holds a live token of this client for exactly these resources, with these
    scopes or more: the only earlier approval that ``approval_prompt=auto`` may reuse."""
    wanted_resources = {resources.normalize(uri) for uri in wanted}
    tokens = get_access_token_model().objects.filter(
        user=user, application__client_id=client_id, expires__gt=timezone.now()
    )
    return any(
        {resources.normalize(uri) for uri in token.resource or ()} == wanted_resources
        and token.allow_scopes(scopes)
        for token in tokens
    )


class AuthorizeView(RefuseNul, AuthorizationView):
    """The toolkit's authorization endpoint with Tiddly's consent page and resource check."""

    template_name = "tiddly_oauth/authorize.html"

    def validate_authorization_request(self, request: HttpRequest) -> Any:
        scopes, credentials = super().validate_authorization_request(request)
        redirect_uri, state = credentials["redirect_uri"], credentials.get("state")
        error = _bad_challenge(credentials.get("code_challenge"), redirect_uri, state)
        if error is not None:
            raise error
        for uri in request.GET.getlist("resource"):
            if not resources.is_known(request, uri):
                raise _invalid_target(uri, redirect_uri, state)
        if request.GET.get("approval_prompt") == "auto" and not _approved_before(
            request.user, credentials["client_id"], scopes, request.GET.getlist("resource")
        ):
            # The toolkit's "auto" reuses any earlier token whose scopes cover these, whatever
            # its resource; only an identical earlier grant may skip consent (SPEC §8.2), so
            # anything else is shown the consent page as if approval were forced.
            query = request.GET.copy()
            query["approval_prompt"] = "force"
            request.GET = QueryDict(query.urlencode())
        return scopes, credentials

    def redirect(self, redirect_to: str, application: Any) -> HttpResponse:
        # Every redirect of this view goes to the client (success and error alike).
        issuer = resources.public_base(self.request)
        return super().redirect(with_issuer(redirect_to, issuer), application)

    def form_valid(self, form: Any) -> HttpResponse:
        data = form.cleaned_data
        error = _bad_challenge(data.get("code_challenge"), data["redirect_uri"], data.get("state"))
        if error is not None:  # the hidden field can be tampered with
            application = (
                get_application_model().objects.filter(client_id=data["client_id"]).first()
            )
            return self.error_response(error, application)
        for uri in (data.get("resource") or "").split():
            if not resources.is_known(self.request, uri):
                application = (
                    get_application_model().objects.filter(client_id=data["client_id"]).first()
                )
                error = _invalid_target(uri, data["redirect_uri"], data.get("state"))
                return self.error_response(error, application)
        return super().form_valid(form)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request))
        application = context.get("application")
        context["client_name"] = (application.name if application else "") or "An unnamed client"
        context["redirect_host"] = urlsplit(context.get("redirect_uri") or "").netloc
        context["scope_items"] = [(s, DESCRIPTIONS.get(s, s)) for s in context.get("scopes", [])]
        context["resources"] = (context.get("resource") or "").split()
        context["title"] = "Authorize access"
        return context


class LoginView(DjangoLoginView):
    """The admin's login page for any active user (the admin's own admits only staff)."""

    template_name = "admin/login.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request))
        context.update(title="Log in", app_path=self.request.get_full_path())
        return context
