"""Revocation (RFC 7009), introspection (RFC 7662), metadata (RFC 8414) and `/api/auth/oauth/me`."""

import pytest
from oauth2_provider.models import AccessToken, Application, RefreshToken

from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, ApplicationFactory, UserFactory
from accounts.tests.oauth_support import REFRESH_URL, TOKEN_URL, basic_auth, obtain_code, pkce_pair, sign_in

pytestmark = pytest.mark.django_db

REVOKE_URL = "/api/auth/oauth/revoke"
INTROSPECT_URL = "/api/auth/oauth/introspect"
ME_URL = "/api/auth/oauth/me"


@pytest.fixture
def user():
    return UserFactory()


@pytest.fixture
def application():
    return ApplicationFactory()


@pytest.fixture
def tokens(client, api_client, user, application):
    sign_in(client, user)
    code = obtain_code(client, application, scope="READ_PROFILE,READ_BOOKING")
    response = api_client.post(
        TOKEN_URL,
        {"grant_type": "authorization_code", "code": code, "redirect_uri": application.redirect_uris},
        HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
    )
    return response.json()


def client_auth(application):
    return {"HTTP_AUTHORIZATION": basic_auth(application.client_id, application.raw_client_secret)}


def me_status(api_client, access_token):
    return api_client.get(ME_URL, HTTP_AUTHORIZATION=f"Bearer {access_token}").status_code


# --- Revocation ------------------------------------------------------------------------------------


def test_revoking_an_access_token_ends_it_and_its_refresh_token(api_client, application, tokens):
    response = api_client.post(REVOKE_URL, {"token": tokens["access_token"]}, **client_auth(application))
    assert response.status_code == 200
    assert me_status(api_client, tokens["access_token"]) == 401
    refused = api_client.post(REFRESH_URL, {"refresh_token": tokens["refresh_token"]}, **client_auth(application))
    assert refused.json()["error"] == "invalid_grant"


def test_revoking_a_refresh_token_ends_its_whole_family(api_client, application, tokens):
    rotated = api_client.post(
        REFRESH_URL, {"refresh_token": tokens["refresh_token"]}, **client_auth(application)
    ).json()
    response = api_client.post(
        REVOKE_URL,
        {"token": rotated["refresh_token"], "token_type_hint": "refresh_token"},
        **client_auth(application),
    )
    assert response.status_code == 200
    assert me_status(api_client, rotated["access_token"]) == 401
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()


def test_revoking_an_unknown_token_is_still_200(api_client, application, tokens):
    response = api_client.post(REVOKE_URL, {"token": "never-issued"}, **client_auth(application))
    assert response.status_code == 200
    assert me_status(api_client, tokens["access_token"]) == 200


def test_a_client_cannot_revoke_another_clients_token(api_client, tokens):
    other = ApplicationFactory()
    response = api_client.post(REVOKE_URL, {"token": tokens["access_token"]}, **client_auth(other))
    assert response.status_code == 200
    assert me_status(api_client, tokens["access_token"]) == 200


def test_revocation_needs_client_authentication(api_client, application, tokens):
    response = api_client.post(
        REVOKE_URL, {"token": tokens["access_token"]}, HTTP_AUTHORIZATION=basic_auth(application.client_id, "bad")
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert response["WWW-Authenticate"] == 'Basic realm="oauth"'
    assert me_status(api_client, tokens["access_token"]) == 200


def test_revocation_without_token_is_invalid_request(api_client, application):
    response = api_client.post(REVOKE_URL, {}, **client_auth(application))
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


def test_public_client_revokes_by_client_id(client, api_client, user):
    application = ApplicationFactory(client_type=Application.CLIENT_PUBLIC)
    sign_in(client, user)
    verifier, challenge = pkce_pair()
    code = obtain_code(client, application, code_challenge=challenge, code_challenge_method="S256")
    body = api_client.post(
        TOKEN_URL,
        {
            "grant_type": "authorization_code",
            "code": code,
            "client_id": application.client_id,
            "redirect_uri": application.redirect_uris,
            "code_verifier": verifier,
        },
    ).json()
    response = api_client.post(REVOKE_URL, {"token": body["refresh_token"], "client_id": application.client_id})
    assert response.status_code == 200
    assert me_status(api_client, body["access_token"]) == 401


# --- Introspection ---------------------------------------------------------------------------------


def test_introspecting_an_active_access_token(api_client, application, tokens, user):
    response = api_client.post(INTROSPECT_URL, {"token": tokens["access_token"]}, **client_auth(application))
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert body["active"] is True
    assert body["scope"] == "READ_PROFILE READ_BOOKING"
    assert body["client_id"] == application.client_id
    assert body["username"] == user.username
    assert body["sub"] == str(user.pk)
    assert body["token_type"] == "Bearer"
    assert body["exp"] > body["iat"]


def test_introspecting_a_refresh_token(api_client, application, tokens):
    response = api_client.post(
        INTROSPECT_URL,
        {"token": tokens["refresh_token"], "token_type_hint": "refresh_token"},
        **client_auth(application),
    )
    body = response.json()
    assert body["active"] is True
    assert body["token_type"] == "refresh_token"


def test_introspection_by_client_secret_in_body(api_client, application, tokens):
    response = api_client.post(
        INTROSPECT_URL,
        {
            "token": tokens["access_token"],
            "client_id": application.client_id,
            "client_secret": application.raw_client_secret,
        },
    )
    assert response.json()["active"] is True


@pytest.mark.parametrize("how", ["unknown", "revoked", "other_client", "suspended", "inactive_user", "expired"])
def test_introspection_says_inactive_and_nothing_more(api_client, application, tokens, user, how):
    token = tokens["access_token"]
    asking = application
    if how == "unknown":
        token = "never-issued"
    elif how == "revoked":
        api_client.post(REVOKE_URL, {"token": token}, **client_auth(application))
    elif how == "other_client":
        asking = ApplicationFactory()
    elif how == "suspended":
        application.profile.suspended = True
        application.profile.save()
        # A suspended client cannot even authenticate to ask.
    elif how == "inactive_user":
        user.is_active = False
        user.save()
    elif how == "expired":
        from datetime import timedelta

        from django.utils import timezone

        AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    response = api_client.post(INTROSPECT_URL, {"token": token}, **client_auth(asking))
    if how == "suspended":
        assert response.status_code == 401
        assert response.json()["error"] == "invalid_client"
    else:
        assert response.status_code == 200
        assert response.json() == {"active": False}


def test_introspection_needs_a_confidential_client(api_client, tokens):
    public = ApplicationFactory(client_type=Application.CLIENT_PUBLIC)
    response = api_client.post(INTROSPECT_URL, {"token": tokens["access_token"], "client_id": public.client_id})
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    with_secret = api_client.post(INTROSPECT_URL, {"token": tokens["access_token"]}, **client_auth(public))
    assert with_secret.status_code == 401


def test_introspection_without_token_is_invalid_request(api_client, application):
    response = api_client.post(INTROSPECT_URL, {}, **client_auth(application))
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


# --- Metadata --------------------------------------------------------------------------------------


def test_metadata_lists_exactly_what_works(api_client):
    response = api_client.get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    body = response.json()
    assert body["issuer"] == "http://testserver"
    assert body["authorization_endpoint"] == "http://testserver/auth/oauth2/authorize"
    assert body["token_endpoint"] == "http://testserver/api/auth/oauth/token"
    assert body["revocation_endpoint"] == "http://testserver/api/auth/oauth/revoke"
    assert body["introspection_endpoint"] == "http://testserver/api/auth/oauth/introspect"
    assert body["response_types_supported"] == ["code"]
    assert body["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert body["code_challenge_methods_supported"] == ["S256"]
    assert "READ_PROFILE" in body["scopes_supported"] and "WRITE_WEBHOOK" in body["scopes_supported"]
    assert set(body["token_endpoint_auth_methods_supported"]) == {
        "client_secret_basic",
        "client_secret_post",
        "none",
    }


# --- /api/auth/oauth/me ----------------------------------------------------------------------------


def test_me_answers_the_tokens_user(api_client):
    token = AccessTokenFactory(scope="READ_PROFILE")
    response = api_client.get(ME_URL, HTTP_AUTHORIZATION=f"Bearer {token.raw_token}")
    assert response.status_code == 200
    assert response.json() == {
        "username": token.user.username,
        "id": token.user.pk,
        "email": token.user.email,
        "name": token.user.name,
    }


def test_me_without_credentials_is_401_not_authenticated(api_client):
    response = api_client.get(ME_URL)
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_me_with_unknown_token_is_401_invalid_token(api_client):
    response = api_client.get(ME_URL, HTTP_AUTHORIZATION="Bearer nope")
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"
    assert response["WWW-Authenticate"] == 'Bearer realm="api", error="invalid_token"'


def test_me_without_read_profile_is_403_insufficient_scope(api_client):
    token = AccessTokenFactory(scope="READ_BOOKING")
    response = api_client.get(ME_URL, HTTP_AUTHORIZATION=f"Bearer {token.raw_token}")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "insufficient_scope"
    assert response["WWW-Authenticate"] == 'Bearer realm="api", error="insufficient_scope", scope="READ_PROFILE"'


def test_me_accepts_an_api_key(api_client):
    api_key = ApiKeyFactory()
    response = api_client.get(ME_URL, {"apiKey": api_key.raw_key})
    assert response.json()["id"] == api_key.user_id


def test_revocation_accepts_a_json_body(api_client, application, tokens):
    response = api_client.post(
        REVOKE_URL,
        {"token": tokens["access_token"]},
        format="json",
        **client_auth(application),
    )
    assert response.status_code == 200
    assert me_status(api_client, tokens["access_token"]) == 401


def test_refresh_by_bearer_header_with_a_json_body(api_client, application, tokens):
    response = api_client.post(
        REFRESH_URL,
        {"client_id": application.client_id, "client_secret": application.raw_client_secret},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {tokens['refresh_token']}",
    )
    assert response.status_code == 200, response.content
    assert me_status(api_client, response.json()["access_token"]) == 200
