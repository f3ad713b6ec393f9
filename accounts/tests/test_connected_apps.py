"""The signed-in user's connected-apps page: list what they authorized, revoke it at once."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, Grant, RefreshToken

from accounts.tests.factories import (
    AccessTokenFactory,
    ApplicationFactory,
    RefreshTokenFactory,
    UserFactory,
)
from accounts.tests.oauth_support import TOKEN_URL, basic_auth, obtain_code, sign_in

pytestmark = pytest.mark.django_db

APPS_URL = "/auth/apps"


@pytest.fixture
def user():
    return UserFactory()


@pytest.fixture
def browser(client, user):
    sign_in(client, user)
    return client


def authorize_through_the_flow(browser, api_client, application, scope):
    code = obtain_code(browser, application, scope=scope)
    response = api_client.post(
        TOKEN_URL,
        {"grant_type": "authorization_code", "code": code, "redirect_uri": application.redirect_uris},
        HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
    )
    return response.json()


def test_page_needs_sign_in(client):
    response = client.get(APPS_URL)
    assert response.status_code == 302
    assert response["Location"].startswith("/auth/login?next=/auth/apps")


def test_page_lists_each_authorized_app_with_logo_scopes_and_dates(browser, api_client, user):
    application = ApplicationFactory(name="Meeting Notes", profile__logo="https://notes.example/logo.png")
    authorize_through_the_flow(browser, api_client, application, "READ_PROFILE,READ_BOOKING")
    response = browser.get(APPS_URL)
    assert response.status_code == 200
    assert response["X-Frame-Options"] == "DENY"
    page = response.content.decode()
    assert "Meeting Notes" in page
    assert 'src="https://notes.example/logo.png"' in page
    assert "See your bookings and when you are free" in page
    assert "Read your profile" in page
    assert timezone.now().strftime("%Y-%m-%d") in page
    assert "Revoke access" in page
    assert page.count("<tr data-application=") == 1


def test_page_does_not_list_other_users_or_dead_tokens(browser, user):
    AccessTokenFactory(application=ApplicationFactory(name="Someone Elses App"))
    AccessTokenFactory(
        user=user, application=ApplicationFactory(name="Long Gone App"), expires=timezone.now() - timedelta(hours=1)
    )
    kept_by_refresh = AccessTokenFactory(
        user=user, application=ApplicationFactory(name="Offline App"), expires=timezone.now() - timedelta(hours=1)
    )
    RefreshTokenFactory(access_token=kept_by_refresh)
    page = browser.get(APPS_URL).content.decode()
    assert "Someone Elses App" not in page
    assert "Long Gone App" not in page
    assert "Offline App" in page


def test_revoke_access_ends_every_token_of_that_app_for_that_user(browser, api_client, user):
    application = ApplicationFactory()
    first = authorize_through_the_flow(browser, api_client, application, "READ_PROFILE")
    second = authorize_through_the_flow(browser, api_client, application, "READ_PROFILE")
    obtain_code(browser, application)  # a pending code must die too
    other_app_tokens = authorize_through_the_flow(browser, api_client, ApplicationFactory(), "READ_PROFILE")
    someone_else = AccessTokenFactory(application=application, scope="READ_PROFILE")

    response = browser.post(f"{APPS_URL}/{application.pk}/revoke")
    assert response.status_code == 302
    assert response["Location"] == APPS_URL

    for tokens in (first, second):
        me = api_client.get("/api/auth/oauth/me", HTTP_AUTHORIZATION=f"Bearer {tokens['access_token']}")
        assert me.status_code == 401
        refreshed = api_client.post(
            "/api/auth/oauth/refreshToken",
            {"refresh_token": tokens["refresh_token"]},
            HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
        )
        assert refreshed.json()["error"] == "invalid_grant"
    assert not Grant.objects.filter(application=application, user=user).exists()
    assert not RefreshToken.objects.filter(application=application, user=user, revoked__isnull=True).exists()
    assert (
        api_client.get(
            "/api/auth/oauth/me", HTTP_AUTHORIZATION=f"Bearer {other_app_tokens['access_token']}"
        ).status_code
        == 200
    )
    assert AccessToken.objects.filter(pk=someone_else.pk).exists()
    assert str(application.name) not in browser.get(APPS_URL).content.decode()


def test_revoke_access_needs_post_and_csrf(user):
    token = AccessTokenFactory(user=user)
    browser = Client(enforce_csrf_checks=True)
    sign_in(browser, user)
    assert browser.get(f"{APPS_URL}/{token.application.pk}/revoke").status_code == 405
    assert browser.post(f"{APPS_URL}/{token.application.pk}/revoke").status_code == 403
    assert AccessToken.objects.filter(pk=token.pk).exists()


def test_revoke_access_for_an_unknown_app_is_404(browser):
    assert browser.post(f"{APPS_URL}/999999/revoke").status_code == 404


def test_sign_out_ends_the_session(browser):
    response = browser.post("/auth/logout")
    assert response.status_code == 302
    assert browser.get(APPS_URL).status_code == 302
