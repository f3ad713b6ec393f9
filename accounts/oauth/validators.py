"""DOT's request validator with this service's rules on top (docs/oauth.md).

What is added to DOT's defaults, each one a security rule of the provider:
- a suspended client is treated as unknown: no authorization, no token, no refresh;
- redirect URIs match a registered one exactly, character for character;
- PKCE is required for public clients (S256 only, see `server.py`), and a `code_verifier` sent
  for a code that was issued without a challenge is refused (PKCE downgrade);
- requested scopes must lie within the client's ceiling (`profile.scope_ceiling`);
- a replayed authorization code revokes every token issued from it;
- an inactive user's codes and refresh tokens are worthless;
- a `client_id` in the body must name the client that authenticated by HTTP Basic;
- `redirect_uri` is required at the token endpoint when the authorization request carried one
  (RFC 6749 §4.1.3).
"""

import hashlib

from oauth2_provider.models import AbstractApplication, Grant, RefreshToken
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

from accounts.oauth import services
from accounts.oauth.selectors import client_is_suspended, client_scope_ceiling
from core.scopes import all_scopes, expand_scopes

# Grant.claims is only used by OpenID Connect, which this server does not offer; it marks a code
# whose authorization request left redirect_uri out (the registered default was used), because
# only such a code may be exchanged without redirect_uri (RFC 6749 §4.1.3).
DEFAULT_REDIRECT_MARKER = "redirect_uri:default"


def code_checksum(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


class ServiceOAuth2Validator(OAuth2Validator):
    def _load_application(self, client_id, request):
        application = super()._load_application(client_id, request)
        if application is not None and client_is_suspended(application):
            request.client = None
            return None
        return application

    def authenticate_client(self, request, *args, **kwargs):
        if not super().authenticate_client(request, *args, **kwargs):
            return False
        # HTTP Basic wins over the body in DOT; a different client_id in the body is a confused or
        # forged request, not something to ignore.
        body_client_id = request.client_id
        return not body_client_id or body_client_id == request.client.client_id

    def _create_authorization_code(self, request, code, expires=None):
        grant = super()._create_authorization_code(request, code, expires)
        if getattr(request, "redirect_uri_given", True) is False:
            grant.claims = DEFAULT_REDIRECT_MARKER
            grant.save(update_fields=["claims"])
        return grant

    def validate_redirect_uri(self, client_id, redirect_uri, request, *args, **kwargs):
        # DOT tolerates some variation (loopback ports, normalisation); we match exactly, so that a
        # look-alike URI can never receive a code (docs/oauth.md).
        return redirect_uri in request.client.redirect_uris.split()

    def validate_response_type(self, client_id, response_type, client, request, *args, **kwargs):
        return response_type == "code" and client.allows_grant_type(AbstractApplication.GRANT_AUTHORIZATION_CODE)

    def validate_scopes(self, client_id, scopes, client, request, *args, **kwargs):
        ceiling = expand_scopes(client_scope_ceiling(client)) & all_scopes()
        return bool(scopes) and set(scopes) <= ceiling

    def is_pkce_required(self, client_id, request):
        client = request.client or self._load_application(client_id, request)
        return client is not None and client.client_type == AbstractApplication.CLIENT_PUBLIC

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        grant = Grant.objects.select_for_update().select_related("user").filter(code=code, application=client).first()
        if grant is None:
            # Unknown, or already exchanged: if it was exchanged, this is a replay (RFC 6749 §4.1.2).
            services.oauth_code_replay_revoke(code_checksum=code_checksum(code), application=client)
            return False
        if grant.is_expired() or not grant.user.is_active:
            return False
        request.scopes = grant.scope.split()
        request.user = grant.user
        request.grant_code_challenge = grant.code_challenge or None
        request.grant_code_challenge_method = grant.code_challenge_method or None
        request.grant_redirect_uri_given = grant.claims != DEFAULT_REDIRECT_MARKER
        return True

    def confirm_redirect_uri(self, client_id, code, redirect_uri, client, request, *args, **kwargs):
        if getattr(request, "using_default_redirect_uri", False) and getattr(request, "grant_redirect_uri_given", True):
            raise errors.InvalidRequestError(
                description="Missing redirect_uri parameter: the authorization request carried one.",
                request=request,
            )
        if super().confirm_redirect_uri(client_id, code, redirect_uri, client, request, *args, **kwargs):
            return True
        # RFC 6749 §5.2 names this invalid_grant; oauthlib would say invalid_request.
        raise errors.InvalidGrantError(
            description="redirect_uri does not match the one of the authorization request.",
            request=request,
        )

    def get_code_challenge(self, code, request):
        challenge = getattr(request, "grant_code_challenge", None)
        if challenge is None and request.code_verifier is not None:
            raise errors.InvalidGrantError(
                description="A code_verifier was sent for a code issued without a code_challenge.",
                request=request,
            )
        return challenge

    def get_code_challenge_method(self, code, request):
        return getattr(request, "grant_code_challenge_method", None)

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            return False
        return request.user.is_active

    def _create_refresh_token(self, request, refresh_token_code, access_token, previous_refresh_token):
        refresh_token = super()._create_refresh_token(request, refresh_token_code, access_token, previous_refresh_token)
        request.issued_refresh_token = refresh_token
        return refresh_token

    def save_bearer_token(self, token, request, *args, **kwargs):
        result = super().save_bearer_token(token, request, *args, **kwargs)
        if request.grant_type == "authorization_code":
            issued: RefreshToken | None = getattr(request, "issued_refresh_token", None)
            services.oauth_code_redemption_record(
                code_checksum=code_checksum(request.code),
                application=request.client,
                user=request.user,
                token_family=issued.token_family if issued else None,
                scope=token.get("scope", ""),
            )
        return result

    def revoke_token(self, token, token_type_hint, request, *args, **kwargs):
        # RFC 7009 §2.1: revoking a refresh token should also end the access tokens of the same
        # grant; with rotation that is the whole token family.
        checksum = hashlib.sha256(token.encode()).hexdigest()
        families = (
            RefreshToken.objects.filter(token_checksum=checksum, application=request.client)
            .exclude(token_family=None)
            .values_list("token_family", flat=True)
        )
        for family in list(families):
            RefreshToken.revoke_family(family)
        super().revoke_token(token, token_type_hint, request, *args, **kwargs)
