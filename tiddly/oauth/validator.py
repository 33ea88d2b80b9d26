"""The toolkit's request validator with Tiddly's grant rules (SPEC §8.2).

- Scopes: a request without ``scope`` gets the scopes of its ``resource`` (both content scopes for
  ``/mcp/content``, both prompt scopes for ``/mcp/prompts``, all four for the REST API or no
  resource), and no grant ever exceeds the ``scope`` the client registered with (RFC 7591).
  The cap is checked wherever oauthlib validates scopes: the consent page and the consent form
  (whose hidden ``scope`` field can be tampered with) alike.
- Replayed codes: every exchanged code is remembered (``RedeemedCode``, hashed); presenting it
  again revokes the tokens first issued from it and all their rotations (RFC 6749 §4.1.2), and
  the answer stays ``invalid_grant``.
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator

from tiddly.models import OAuthClientScope, RedeemedCode
from tiddly.oauth import resources
from tiddly.scopes import ALL_SCOPES


def _hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def registered_scopes(client: Any) -> frozenset[str]:
    """The most ``client`` may be granted: its registered ``scope``, else every scope."""
    if client is None or client.pk is None:
        return frozenset(ALL_SCOPES)
    scope = OAuthClientScope.objects.filter(application=client).values_list("scope", flat=True)
    stored = scope.first()
    return frozenset(stored.split()) if stored else frozenset(ALL_SCOPES)


def requested_resources(request: Any) -> list[str]:
    """The ``resource`` parameters of an authorization request (RFC 8707 allows several)."""
    query = urlsplit(getattr(request, "uri", "") or "").query
    return [value for key, value in parse_qsl(query, keep_blank_values=True) if key == "resource"]


class Validator(OAuth2Validator):
    def get_default_scopes(self, client_id: str, request: Any, *args: Any, **kwargs: Any) -> Any:
        wanted = resources.scopes_for_resources(requested_resources(request))
        allowed = registered_scopes(request.client)
        return [scope for scope in wanted if scope in allowed]

    def validate_scopes(
        self, client_id: str, scopes: Any, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        chosen = {scope for scope in scopes if scope}
        if not chosen:  # nothing left once capped: an invalid_scope error, never an empty grant
            return False
        return chosen <= registered_scopes(client) and super().validate_scopes(
            client_id, scopes, client, request, *args, **kwargs
        )

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if super().validate_code(client_id, code, client, request, *args, **kwargs):
            return True
        for redeemed in RedeemedCode.objects.filter(code_hash=_hash(code), application=client):
            revoke_issued(redeemed)
        return False

    def _save_bearer_token(self, token: Any, request: Any, *args: Any, **kwargs: Any) -> None:
        super()._save_bearer_token(token, request, *args, **kwargs)
        if request.grant_type != "authorization_code" or not token.get("access_token"):
            return
        access = (
            get_access_token_model()
            .objects.filter(token_checksum=_hash(token["access_token"]))
            .first()
        )
        refresh = (
            get_refresh_token_model().objects.filter(access_token=access).first()
            if access is not None
            else None
        )
        RedeemedCode.objects.create(
            code_hash=_hash(request.code),
            application=request.client,
            access_token=access,
            token_family=refresh.token_family if refresh is not None else None,
        )


def revoke_issued(redeemed: RedeemedCode) -> None:
    """Revoke what a code was exchanged for: its refresh token family and its access token."""
    if redeemed.token_family is not None:
        get_refresh_token_model().revoke_family(redeemed.token_family)
    if redeemed.access_token_id is not None:
        get_access_token_model().objects.filter(pk=redeemed.access_token_id).delete()
