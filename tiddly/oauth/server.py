"""django-oauth-toolkit's oauthlib server, narrowed to what Tiddly offers (SPEC §8.2).

- PKCE with S256 only: oauthlib accepts "plain" and defaults a missing method to it; here both
  are ``invalid_request`` at the authorization endpoint, before any consent is shown.
- Tokens carry a recognisable prefix (``tdlo_`` access, ``tdlr_`` refresh) so the shared bearer
  authentication can tell them from API tokens (``tdly_``) without a second lookup.
"""

from __future__ import annotations

import secrets
from typing import Any

from oauthlib.oauth2 import Server as OAuthlibServer
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import code_challenge_method_s256

from tiddly.auth import OAUTH_ACCESS_PREFIX

OAUTH_REFRESH_PREFIX = "tdlr_"


class Server(OAuthlibServer):
    def __init__(self, request_validator: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(request_validator, *args, **kwargs)
        self.auth_grant._code_challenge_methods = {"S256": code_challenge_method_s256}


def access_token(request: Any, refresh_token: bool = False) -> str:
    return OAUTH_ACCESS_PREFIX + secrets.token_urlsafe(32)


def refresh_token(request: Any, refresh_token: bool = False) -> str:
    return OAUTH_REFRESH_PREFIX + secrets.token_urlsafe(32)
