"""The operator registers OAuth clients in the admin; the secret is shown once and stored hashed."""

import base64
import re
from urllib.parse import quote

import pytest
from django.contrib.auth.hashers import check_password, identify_hasher
from django.test import Client
from django.urls import reverse
from oauth2_provider.models import Application
from oauth2_provider.settings import oauth2_settings
from oauthlib.common import Request
from rest_framework.request import Request as DRFRequest
from rest_framework.test import APIRequestFactory

from accounts.authentication import CredentialAuthentication
from accounts.models import OAuthClientProfile
from accounts.tests.factories import AccessTokenFactory, ApplicationFactory, UserFactory
from accounts.tests.oauth_support import (
    TOKEN_URL,
    authorize_url,
    basic_auth,
    obtain_code,
    redirect_params,
    sign_in,
)
from core.exceptions import InvalidToken

pytestmark = pytest.mark.django_db


def registration(**overrides):
    form = {
        "name": "Acme Calendar Sync",
        "redirect_uris": "https://acme.example/callback\nhttp://127.0.0.1:8765/callback",
        "client_type": Application.CLIENT_CONFIDENTIAL,
        "logo": "https://acme.example/logo.png",
        "app_link": "https://acme.example",
        "scope_ceiling": ["READ_PROFILE", "READ_BOOKING"],
    }
    form.update(overrides)
    return form


def revealed_values(response) -> dict[str, str]:
    return {label: value for label, value, _ in response.context["values"] or []}


def client_authenticates(client_id: str, client_secret: str) -> bool:
    """Client authentication exactly as the token endpoint does it (HTTP Basic, RFC 6749 §2.3.1)."""
    basic = base64.b64encode(f"{quote(client_id)}:{quote(client_secret)}".encode()).decode()
    request = Request(
        "http://testserver/api/auth/oauth/token",
        http_method="POST",
        body="grant_type=authorization_code&code=irrelevant",
        headers={"HTTP_AUTHORIZATION": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"},
    )
    request.grant_type = "authorization_code"
    return oauth2_settings.OAUTH2_VALIDATOR_CLASS().authenticate_client(request)


def test_registering_a_client_shows_its_secret_once_and_stores_only_a_hash(operator_client):
    response = operator_client.post(reverse("admin:oauth2_provider_application_add"), registration(), follow=True)

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    values = revealed_values(response)
    application = Application.objects.get(name="Acme Calendar Sync")
    assert values["Client ID"] == application.client_id
    secret = values["Client secret"]
    assert len(secret) >= 40
    assert "will not be shown again" in response.content.decode()
    assert secret in response.content.decode()

    assert secret not in application.client_secret
    assert identify_hasher(application.client_secret).algorithm == "secret_sha256"
    assert check_password(secret, application.client_secret)
    assert application.authorization_grant_type == Application.GRANT_AUTHORIZATION_CODE
    assert application.redirect_uris == "https://acme.example/callback http://127.0.0.1:8765/callback"
    profile = application.profile
    assert (profile.logo, profile.app_link, profile.scope_ceiling, profile.suspended) == (
        "https://acme.example/logo.png",
        "https://acme.example",
        ["READ_PROFILE", "READ_BOOKING"],
        False,
    )

    again = operator_client.get(response.request["PATH_INFO"])
    assert again.status_code == 200
    assert again.context["values"] is None
    assert secret not in again.content.decode()
    change_page = operator_client.get(reverse("admin:oauth2_provider_application_change", args=[application.pk]))
    assert application.client_id in change_page.content.decode()
    assert secret not in change_page.content.decode()
    assert application.client_secret not in change_page.content.decode()


def test_a_client_registered_in_the_admin_authenticates_with_the_revealed_secret(operator_client):
    response = operator_client.post(reverse("admin:oauth2_provider_application_add"), registration(), follow=True)
    values = revealed_values(response)

    assert client_authenticates(values["Client ID"], values["Client secret"])
    secret = values["Client secret"]
    wrong_secret = secret[:-1] + ("y" if secret.endswith("x") else "x")  # never the secret itself
    assert not client_authenticates(values["Client ID"], wrong_secret)


def test_a_client_registered_in_the_admin_gets_tokens_at_the_token_endpoint(operator_client):
    response = operator_client.post(
        reverse("admin:oauth2_provider_application_add"),
        registration(redirect_uris="http://127.0.0.1:8765/callback"),
        follow=True,
    )
    values = revealed_values(response)
    application = Application.objects.get(client_id=values["Client ID"])
    browser = Client()  # the user's browser, apart from the operator's
    sign_in(browser, UserFactory())

    code = obtain_code(browser, application, scope="READ_PROFILE READ_BOOKING", state="s")
    wrong = browser.post(
        TOKEN_URL,
        {"grant_type": "authorization_code", "code": code, "redirect_uri": "http://127.0.0.1:8765/callback"},
        HTTP_AUTHORIZATION=basic_auth(values["Client ID"], "not-the-secret"),
    )
    right = browser.post(
        TOKEN_URL,
        {"grant_type": "authorization_code", "code": code, "redirect_uri": "http://127.0.0.1:8765/callback"},
        HTTP_AUTHORIZATION=basic_auth(values["Client ID"], values["Client secret"]),
    )

    assert (wrong.status_code, wrong.json()["error"]) == (401, "invalid_client")
    assert right.status_code == 200, right.content
    assert right.json()["access_token"]
    assert set(right.json()["scope"].split()) == {"READ_PROFILE", "READ_BOOKING"}


def test_the_scope_ceiling_set_in_the_admin_limits_what_the_client_may_ask_for(operator_client):
    response = operator_client.post(
        reverse("admin:oauth2_provider_application_add"),
        registration(redirect_uris="http://127.0.0.1:8765/callback", scope_ceiling=["READ_PROFILE"]),
        follow=True,
    )
    application = Application.objects.get(client_id=revealed_values(response)["Client ID"])
    browser = Client()  # the user's browser, apart from the operator's
    sign_in(browser, UserFactory())

    refused = browser.get(authorize_url(application, scope="READ_PROFILE WRITE_BOOKING", state="s"))

    assert redirect_params(refused)["error"] == "invalid_scope"


def test_a_public_client_is_shown_its_client_id_and_no_secret(operator_client):
    response = operator_client.post(
        reverse("admin:oauth2_provider_application_add"),
        registration(name="Acme Mobile", client_type=Application.CLIENT_PUBLIC),
        follow=True,
    )

    values = revealed_values(response)
    assert list(values) == ["Client ID"]
    assert Application.objects.get(name="Acme Mobile").client_type == Application.CLIENT_PUBLIC


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("redirect_uris", "", "This field is required."),
        ("redirect_uris", "not a url", "redirect"),
        ("scope_ceiling", ["READ_EVERYTHING"], "Select a valid choice."),
        ("scope_ceiling", [], "This field is required."),
        ("name", "", "This field is required."),
        ("logo", "javascript:alert(1)", "Enter a valid URL."),
    ],
)
def test_an_invalid_registration_is_refused_and_nothing_is_stored(operator_client, field, value, message):
    response = operator_client.post(reverse("admin:oauth2_provider_application_add"), registration(**{field: value}))

    assert response.status_code == 200
    assert message.lower() in str(response.context["adminform"].form.errors).lower()
    assert not Application.objects.exists()
    assert not OAuthClientProfile.objects.exists()


def test_editing_a_client_keeps_its_secret_and_updates_the_profile(operator_client):
    application = ApplicationFactory()
    stored_secret = application.client_secret
    url = reverse("admin:oauth2_provider_application_change", args=[application.pk])

    response = operator_client.post(
        url, registration(name="Renamed", scope_ceiling=["READ_SCHEDULE", "WRITE_SCHEDULE"], suspended="on")
    )

    assert response.status_code == 302
    application.refresh_from_db()
    assert application.name == "Renamed"
    assert application.client_secret == stored_secret
    assert check_password(application.raw_client_secret, application.client_secret)
    assert application.profile.scope_ceiling == ["READ_SCHEDULE", "WRITE_SCHEDULE"]
    assert application.profile.suspended is True


def test_issuing_a_new_secret_reveals_it_once_and_the_old_one_stops_working(operator_client):
    application = ApplicationFactory()
    old_secret = application.raw_client_secret
    change_url = reverse("admin:oauth2_provider_application_change", args=[application.pk])
    assert "Issue a new client secret" in operator_client.get(change_url).content.decode()

    response = operator_client.post(
        reverse("admin:oauth2_provider_application_reset_secret", args=[application.pk]), follow=True
    )

    new_secret = revealed_values(response)["Client secret"]
    assert new_secret != old_secret
    assert client_authenticates(application.client_id, new_secret)
    assert not client_authenticates(application.client_id, old_secret)


def test_issuing_a_new_secret_needs_a_post(operator_client):
    application = ApplicationFactory()
    stored_secret = application.client_secret

    response = operator_client.get(reverse("admin:oauth2_provider_application_reset_secret", args=[application.pk]))

    assert response.status_code == 405
    application.refresh_from_db()
    assert application.client_secret == stored_secret


def test_suspend_action_stops_the_clients_tokens_at_once(operator_client):
    token = AccessTokenFactory(scope="READ_PROFILE")
    application = token.application

    response = operator_client.post(
        reverse("admin:oauth2_provider_application_changelist"),
        {"action": "suspend_clients", "_selected_action": [application.pk]},
    )

    assert response.status_code == 302
    application.profile.refresh_from_db()
    assert application.profile.suspended is True
    request = DRFRequest(APIRequestFactory().get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {token.raw_token}"))
    with pytest.raises(InvalidToken):
        CredentialAuthentication().authenticate(request)


def test_reactivate_action_lifts_a_suspension(operator_client):
    application = ApplicationFactory(profile__suspended=True)

    operator_client.post(
        reverse("admin:oauth2_provider_application_changelist"),
        {"action": "reactivate_clients", "_selected_action": [application.pk]},
    )

    application.profile.refresh_from_db()
    assert application.profile.suspended is False


def test_the_client_list_shows_ceiling_and_suspension_and_never_a_secret(operator_client):
    application = ApplicationFactory(profile__scope_ceiling=["READ_PROFILE"], profile__suspended=True)

    response = operator_client.get(reverse("admin:oauth2_provider_application_changelist"))

    content = response.content.decode()
    assert application.client_id in content
    assert "READ_PROFILE" in content
    assert application.raw_client_secret not in content
    assert not re.search(r"secret_sha256\$", content)
