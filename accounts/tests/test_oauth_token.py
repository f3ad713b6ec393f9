"""`POST /api/auth/oauth/token` and `/refreshToken` (docs/oauth.md, steps 2 and 3): every error case."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

from accounts.models import OAuthCodeRedemption
from accounts.tests.factories import ApplicationFactory, UserFactory
from accounts.tests.oauth_support import (
    REFRESH_URL,
    TOKEN_URL,
    basic_auth,
    obtain_code,
    pkce_pair,
    sign_in,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():
    return UserFactory()


@pytest.fixture
def application():
    return ApplicationFactory()


@pytest.fixture
def browser(client, user):
    sign_in(client, user)
    return client


@pytest.fixture
def api(api_client):
    return api_client


def exchange(api, application, code, **overrides):
    body = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": application.client_id,
        "client_secret": getattr(application, "raw_client_secret", ""),
        "redirect_uri": application.redirect_uris.split()[0],
    }
    body.update(overrides)
    body = {key: value for key, value in body.items() if value is not None}
    return api.post(TOKEN_URL, body)


def assert_oauth_error(response, status, error):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"] == error
    assert body["error_description"]
    assert response["Cache-Control"] == "no-store"


def me(api, access_token):
    return api.get("/api/auth/oauth/me", HTTP_AUTHORIZATION=f"Bearer {access_token}")


def tokens_for(api, browser, application, **params):
    code = obtain_code(browser, application, **params)
    response = exchange(api, application, code)
    assert response.status_code == 200, response.content
    return response.json()


# --- Successful exchanges ------------------------------------------------------------------------


def test_code_exchange_answers_tokens_with_no_store(api, browser, application, user):
    code = obtain_code(browser, application, scope="READ_PROFILE READ_BOOKING")
    response = exchange(api, application, code)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert set(body) == {"access_token", "refresh_token", "token_type", "expires_in", "scope"}
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 1800
    assert body["scope"] == "READ_PROFILE READ_BOOKING"
    assert me(api, body["access_token"]).json() == {
        "username": user.username,
        "id": user.pk,
        "email": user.email,
        "name": user.name,
    }


def test_tokens_are_stored_only_as_checksums(api, browser, application):
    body = tokens_for(api, browser, application)
    assert not AccessToken.objects.filter(token=body["access_token"]).exists()
    assert AccessToken.objects.get().token == ""
    assert RefreshToken.objects.get().token == ""


def test_client_secret_may_come_by_http_basic(api, browser, application):
    code = obtain_code(browser, application)
    response = api.post(
        TOKEN_URL,
        {"grant_type": "authorization_code", "code": code, "redirect_uri": application.redirect_uris},
        HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
    )
    assert response.status_code == 200, response.content


def test_json_body_is_accepted(api, browser, application):
    code = obtain_code(browser, application)
    body = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": application.client_id,
        "client_secret": application.raw_client_secret,
        "redirect_uri": application.redirect_uris,
    }
    response = api.post(TOKEN_URL, json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["access_token"]


@pytest.mark.parametrize("body", ["{not json", "[1, 2]", '{"code": {"a": 1}}'])
def test_malformed_json_body_is_invalid_request(api, body):
    response = api.post(TOKEN_URL, body, content_type="application/json")
    assert_oauth_error(response, 400, "invalid_request")


@pytest.mark.parametrize(
    "body",
    [
        '{"grant_type": "authorization_code", "code": "a\\u0000b", "client_id": "x"}',
        '{"grant_type": "authorization_code", "code": "\\ud800", "client_id": "x"}',
        '{"grant_type": "authorization_code", "client_id": "x\\u0000"}',
        '{"code\\u0000": "a"}',
        "[" * 100_000 + "]" * 100_000,
    ],
    ids=["nul-in-code", "lone-surrogate", "nul-in-client-id", "nul-in-name", "deeply-nested"],
)
@pytest.mark.parametrize("url", [TOKEN_URL, "/api/auth/oauth/refreshToken", "/api/auth/oauth/revoke"])
def test_json_text_the_database_cannot_hold_is_invalid_request_and_issues_nothing(api, url, body):
    from oauth2_provider.models import AccessToken

    response = api.post(url, body, content_type="application/json")

    assert_oauth_error(response, 400, "invalid_request")
    assert not AccessToken.objects.exists()


def test_confidential_client_with_pkce_must_send_the_verifier(api, browser, application):
    verifier, challenge = pkce_pair()
    code = obtain_code(browser, application, code_challenge=challenge, code_challenge_method="S256")
    assert_oauth_error(exchange(api, application, code), 400, "invalid_request")
    assert_oauth_error(exchange(api, application, code, code_verifier=pkce_pair()[0]), 400, "invalid_grant")
    assert exchange(api, application, code, code_verifier=verifier).status_code == 200


def test_public_client_exchanges_with_verifier_and_no_secret(api, browser):
    application = ApplicationFactory(client_type=Application.CLIENT_PUBLIC)
    verifier, challenge = pkce_pair()
    code = obtain_code(browser, application, code_challenge=challenge, code_challenge_method="S256")
    response = exchange(api, application, code, client_secret=None, code_verifier=verifier)
    assert response.status_code == 200, response.content


def test_public_client_with_wrong_verifier_is_invalid_grant(api, browser):
    application = ApplicationFactory(client_type=Application.CLIENT_PUBLIC)
    _verifier, challenge = pkce_pair()
    code = obtain_code(browser, application, code_challenge=challenge, code_challenge_method="S256")
    response = exchange(api, application, code, client_secret=None, code_verifier=pkce_pair()[0])
    assert_oauth_error(response, 400, "invalid_grant")
    assert AccessToken.objects.count() == 0


# --- Errors ----------------------------------------------------------------------------------------


def test_wrong_client_secret_in_body_is_invalid_client_401(api, browser, application):
    code = obtain_code(browser, application)
    response = exchange(api, application, code, client_secret="wrong")
    assert_oauth_error(response, 401, "invalid_client")
    assert response["WWW-Authenticate"].startswith("Basic")
    assert AccessToken.objects.count() == 0
    assert Grant.objects.count() == 1


def test_wrong_client_secret_by_basic_is_401_with_basic_challenge(api, browser, application):
    code = obtain_code(browser, application)
    response = api.post(
        TOKEN_URL,
        {"grant_type": "authorization_code", "code": code, "redirect_uri": application.redirect_uris},
        HTTP_AUTHORIZATION=basic_auth(application.client_id, "wrong"),
    )
    assert_oauth_error(response, 401, "invalid_client")
    assert response["WWW-Authenticate"] == 'Basic realm="oauth"'
    assert AccessToken.objects.count() == 0


def test_missing_client_secret_for_confidential_client_is_invalid_client(api, browser, application):
    code = obtain_code(browser, application)
    assert_oauth_error(exchange(api, application, code, client_secret=None), 401, "invalid_client")


def test_unknown_code_is_invalid_grant(api, application):
    assert_oauth_error(exchange(api, application, "no-such-code"), 400, "invalid_grant")


def test_missing_code_is_invalid_request(api, application):
    assert_oauth_error(exchange(api, application, None), 400, "invalid_request")


def test_expired_code_is_invalid_grant(api, browser, application):
    code = obtain_code(browser, application)
    Grant.objects.update(expires=timezone.now() - timedelta(seconds=1))
    assert_oauth_error(exchange(api, application, code), 400, "invalid_grant")
    assert AccessToken.objects.count() == 0


def test_code_of_another_client_is_invalid_grant(api, browser, application):
    code = obtain_code(browser, application)
    other = ApplicationFactory()
    assert_oauth_error(exchange(api, other, code), 400, "invalid_grant")
    assert Grant.objects.count() == 1


def test_replayed_code_is_refused_and_its_tokens_revoked(api, browser, application):
    code = obtain_code(browser, application)
    first = exchange(api, application, code).json()
    # The family grows by a refresh before the replay: that one must die too.
    rotated = api.post(
        REFRESH_URL,
        {"refresh_token": first["refresh_token"], **client_auth(application)},
    ).json()
    other = tokens_for(api, browser, application)  # a separate authorization, not replayed

    assert_oauth_error(exchange(api, application, code), 400, "invalid_grant")

    assert me(api, first["access_token"]).status_code == 401
    assert me(api, rotated["access_token"]).status_code == 401
    refused = api.post(REFRESH_URL, {"refresh_token": rotated["refresh_token"], **client_auth(application)})
    assert_oauth_error(refused, 400, "invalid_grant")
    assert me(api, other["access_token"]).status_code == 200
    assert OAuthCodeRedemption.objects.filter(application=application).count() == 2


def test_redirect_uri_mismatch_at_token_is_invalid_grant(api, browser):
    application = ApplicationFactory(redirect_uris="https://a.example/cb https://b.example/cb")
    code = obtain_code(browser, application, redirect_uri="https://a.example/cb")
    response = exchange(api, application, code, redirect_uri="https://b.example/cb")
    assert_oauth_error(response, 400, "invalid_grant")
    assert AccessToken.objects.count() == 0


def test_code_verifier_for_a_code_without_challenge_is_refused(api, browser, application):
    code = obtain_code(browser, application)
    response = exchange(api, application, code, code_verifier=pkce_pair()[0])
    assert_oauth_error(response, 400, "invalid_grant")
    assert AccessToken.objects.count() == 0


@pytest.mark.parametrize("grant_type", ["password", "client_credentials", "implicit", "urn:x"])
def test_unsupported_grant_type(api, application, grant_type):
    response = api.post(
        TOKEN_URL,
        {"grant_type": grant_type, "username": "u", "password": "p", **client_auth(application)},
    )
    assert_oauth_error(response, 400, "unsupported_grant_type")
    assert AccessToken.objects.count() == 0


def test_missing_grant_type_is_invalid_request(api, application):
    assert_oauth_error(api.post(TOKEN_URL, client_auth(application)), 400, "invalid_request")


def test_token_endpoint_refuses_get(api):
    assert api.get(TOKEN_URL).status_code == 405


def test_suspended_client_cannot_exchange_and_its_tokens_stop_working(api, browser, application):
    body = tokens_for(api, browser, application)
    code = obtain_code(browser, application)
    application.profile.suspended = True
    application.profile.save()

    assert_oauth_error(exchange(api, application, code), 401, "invalid_client")
    refused = api.post(REFRESH_URL, {"refresh_token": body["refresh_token"], **client_auth(application)})
    assert_oauth_error(refused, 401, "invalid_client")
    response = me(api, body["access_token"])
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"


def test_inactive_user_tokens_and_codes_stop_working(api, browser, application, user):
    body = tokens_for(api, browser, application)
    code = obtain_code(browser, application)
    user.is_active = False
    user.save()

    assert_oauth_error(exchange(api, application, code), 400, "invalid_grant")
    refused = api.post(REFRESH_URL, {"refresh_token": body["refresh_token"], **client_auth(application)})
    assert_oauth_error(refused, 400, "invalid_grant")
    assert me(api, body["access_token"]).status_code == 401


# --- Refresh ---------------------------------------------------------------------------------------


def client_auth(application):
    return {"client_id": application.client_id, "client_secret": application.raw_client_secret}


def test_refresh_by_body_rotates_the_refresh_token(api, browser, application):
    first = tokens_for(api, browser, application, scope="READ_PROFILE")
    response = api.post(REFRESH_URL, {"refresh_token": first["refresh_token"], **client_auth(application)})
    assert response.status_code == 200, response.content
    assert response["Cache-Control"] == "no-store"
    second = response.json()
    assert set(second) == {"access_token", "refresh_token", "token_type", "expires_in", "scope"}
    assert second["refresh_token"] != first["refresh_token"]
    assert second["scope"] == "READ_PROFILE"
    assert me(api, second["access_token"]).status_code == 200
    assert me(api, first["access_token"]).status_code == 401


def test_refresh_by_bearer_header_with_client_in_body(api, browser, application):
    first = tokens_for(api, browser, application)
    response = api.post(REFRESH_URL, client_auth(application), HTTP_AUTHORIZATION=f"Bearer {first['refresh_token']}")
    assert response.status_code == 200, response.content
    assert me(api, response.json()["access_token"]).status_code == 200


def test_refresh_body_wins_over_bearer_header(api, browser, application):
    first = tokens_for(api, browser, application)
    response = api.post(
        REFRESH_URL,
        {"refresh_token": first["refresh_token"], **client_auth(application)},
        HTTP_AUTHORIZATION="Bearer not-a-refresh-token",
    )
    assert response.status_code == 200, response.content


def test_refresh_with_comma_separated_narrower_scope(api, browser, application):
    first = tokens_for(api, browser, application, scope="READ_PROFILE READ_BOOKING")
    response = api.post(
        REFRESH_URL,
        {"refresh_token": first["refresh_token"], "scope": "READ_PROFILE,", **client_auth(application)},
    )
    assert response.json()["scope"] == "READ_PROFILE"


def test_refresh_asking_for_more_scope_is_invalid_scope(api, browser, application):
    first = tokens_for(api, browser, application, scope="READ_PROFILE")
    response = api.post(
        REFRESH_URL,
        {"refresh_token": first["refresh_token"], "scope": "READ_PROFILE,WRITE_BOOKING", **client_auth(application)},
    )
    assert_oauth_error(response, 400, "invalid_scope")


def test_refresh_grant_is_accepted_at_the_token_endpoint_too(api, browser, application):
    first = tokens_for(api, browser, application)
    response = api.post(
        TOKEN_URL,
        {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]},
        HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
    )
    assert response.status_code == 200, response.content


def test_refresh_endpoint_refuses_other_grant_types(api, application):
    response = api.post(REFRESH_URL, {"grant_type": "authorization_code", "code": "x", **client_auth(application)})
    assert_oauth_error(response, 400, "unsupported_grant_type")


def test_reused_rotated_refresh_token_revokes_the_whole_family(api, browser, application):
    first = tokens_for(api, browser, application)
    second = api.post(REFRESH_URL, {"refresh_token": first["refresh_token"], **client_auth(application)}).json()

    replay = api.post(REFRESH_URL, {"refresh_token": first["refresh_token"], **client_auth(application)})
    assert_oauth_error(replay, 400, "invalid_grant")

    assert me(api, second["access_token"]).status_code == 401
    refused = api.post(REFRESH_URL, {"refresh_token": second["refresh_token"], **client_auth(application)})
    assert_oauth_error(refused, 400, "invalid_grant")
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()
    assert AccessToken.objects.count() == 0


def test_refresh_token_of_another_client_is_refused(api, browser, application):
    first = tokens_for(api, browser, application)
    other = ApplicationFactory()
    response = api.post(REFRESH_URL, {"refresh_token": first["refresh_token"], **client_auth(other)})
    assert_oauth_error(response, 400, "invalid_grant")


def test_refresh_with_wrong_secret_is_invalid_client(api, browser, application):
    first = tokens_for(api, browser, application)
    response = api.post(
        REFRESH_URL,
        {"refresh_token": first["refresh_token"], "client_id": application.client_id, "client_secret": "nope"},
    )
    assert_oauth_error(response, 401, "invalid_client")
    assert me(api, first["access_token"]).status_code == 200


def test_refresh_token_expires_after_the_idle_time(api, browser, application, settings):
    first = tokens_for(api, browser, application)
    AccessToken.objects.update(expires=timezone.now() - timedelta(days=90, seconds=1))
    response = api.post(REFRESH_URL, {"refresh_token": first["refresh_token"], **client_auth(application)})
    assert_oauth_error(response, 400, "invalid_grant")


def test_refresh_token_idle_for_less_than_the_limit_still_works(api, browser, application):
    first = tokens_for(api, browser, application)
    AccessToken.objects.update(expires=timezone.now() - timedelta(days=89))
    response = api.post(REFRESH_URL, {"refresh_token": first["refresh_token"], **client_auth(application)})
    assert response.status_code == 200


def test_default_lifetimes_come_from_settings(settings):
    from oauth2_provider.settings import oauth2_settings

    assert oauth2_settings.ACCESS_TOKEN_EXPIRE_SECONDS == 1800
    assert oauth2_settings.AUTHORIZATION_CODE_EXPIRE_SECONDS <= 600
    assert oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS == 90 * 24 * 3600
