"""The oauthlib server behind the OAuth endpoints (docs/oauth.md).

oauthlib's stock `Server` also speaks the implicit, password and client-credentials grants and
PKCE `plain`; this one offers only what docs/oauth.md documents, so everything else is refused by
oauthlib itself (`unsupported_response_type`, `unsupported_grant_type`, `invalid_request`).
"""

from oauthlib.oauth2 import BearerToken
from oauthlib.oauth2.rfc6749 import errors
from oauthlib.oauth2.rfc6749.endpoints import (
    AuthorizationEndpoint,
    ResourceEndpoint,
    RevocationEndpoint,
    TokenEndpoint,
)
from oauthlib.oauth2.rfc6749.grant_types import AuthorizationCodeGrant, RefreshTokenGrant
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import code_challenge_method_s256

from core.scopes import parse_scopes


class S256AuthorizationCodeGrant(AuthorizationCodeGrant):
    # oauthlib defaults an absent code_challenge_method to "plain"; with "plain" gone from this
    # table, both an explicit and an implied "plain" are refused with invalid_request.
    _code_challenge_methods = {"S256": code_challenge_method_s256}


def _authorization_defaults(request) -> dict:
    """Cal.com clients send no response_type and may separate scopes with commas."""
    if request.response_type is None:
        request.response_type = "code"
    elif request.response_type != "code":
        raise errors.UnsupportedResponseTypeError(request=request)
    request.response_mode = "query"  # the only mode offered (RFC 8414 response_modes_supported)
    scopes = parse_scopes(request.scope)
    request.scopes = scopes or None
    if not scopes:
        request.scope = None  # oauthlib then falls back to the default scopes
    return {}


class Server(AuthorizationEndpoint, TokenEndpoint, ResourceEndpoint, RevocationEndpoint):
    def __init__(
        self,
        request_validator,
        token_expires_in=None,
        token_generator=None,
        refresh_token_generator=None,
        **kwargs,
    ):
        code_grant = S256AuthorizationCodeGrant(request_validator, pre_auth=[_authorization_defaults])
        refresh_grant = RefreshTokenGrant(request_validator)
        bearer = BearerToken(request_validator, token_generator, token_expires_in, refresh_token_generator)
        AuthorizationEndpoint.__init__(
            self, default_response_type="code", response_types={"code": code_grant}, default_token_type=bearer
        )
        TokenEndpoint.__init__(
            self,
            default_grant_type="authorization_code",
            grant_types={"authorization_code": code_grant, "refresh_token": refresh_grant},
            default_token_type=bearer,
        )
        ResourceEndpoint.__init__(self, default_token="Bearer", token_types={"Bearer": bearer})
        RevocationEndpoint.__init__(self, request_validator)
