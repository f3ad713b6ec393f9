"""The token endpoints, read from outside (docs/oauth.md; RFC 6749 §3.2, §4.1.3, §2.3)."""

import pytest
from oauth2_provider.models import AccessToken, Grant

from accounts.tests.factories import ApplicationFactory, UserFactory
from accounts.tests.oauth_support import (
    AUTHORIZE_URL,
    REFRESH_URL,
    TOKEN_URL,
    basic_auth,
    obtain_code,
    redirect_params,
    sign_in,
)

pytestmark = pytest.mark.django_db

INTROSPECT_URL = "/api/auth/oauth/introspect"
REVOKE_URL = "/api/auth/oauth/revoke"


@pytest.fixture
def application():
    return ApplicationFactory()


@pytest.fixture
def browser(client):
    sign_in(client, UserFactory())
    return client


def redirect_uri(application) -> str:
    return application.redirect_uris.split()[0]


def assert_oauth_error(response, status, error):
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == error
    assert response.json()["error_description"]
    assert response["Cache-Control"] == "no-store"


def test_token_request_without_redirect_uri_is_refused_when_authorization_carried_one(api_client, browser, application):
    code = obtain_code(browser, application)
    response = api_client.post(
        TOKEN_URL,
        {"grant_type": "authorization_code", "code": code},
        HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
    )
    assert_oauth_error(response, 400, "invalid_request")
    assert "redirect_uri" in response.json()["error_description"]
    assert not AccessToken.objects.filter(application=application).exists()


def test_code_authorized_without_redirect_uri_is_exchanged_without_one(api_client, browser, application):
    query = f"?client_id={application.client_id}&state=s&scope=READ_PROFILE"
    code = redirect_params(browser.post(AUTHORIZE_URL + query, {"decision": "allow"}))["code"]
    response = api_client.post(
        TOKEN_URL,
        {"grant_type": "authorization_code", "code": code},
        HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
    )
    assert response.status_code == 200, response.content
    assert response.json()["scope"] == "READ_PROFILE"


def test_code_authorized_with_redirect_uri_is_exchanged_when_repeated(api_client, browser, application):
    code = obtain_code(browser, application)
    response = api_client.post(
        TOKEN_URL,
        {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri(application)},
        HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
    )
    assert response.status_code == 200, response.content


def test_parameter_sent_twice_is_invalid_request_and_the_code_stays_unused(client, browser, application):
    code = obtain_code(browser, application)
    body = (
        f"grant_type=authorization_code&code=other&code={code}"
        f"&redirect_uri={redirect_uri(application)}&client_id={application.client_id}"
        f"&client_secret={application.raw_client_secret}"
    )
    response = client.post(TOKEN_URL, body, content_type="application/x-www-form-urlencoded")
    assert_oauth_error(response, 400, "invalid_request")
    assert "'code'" in response.json()["error_description"]
    assert Grant.objects.filter(code=code).exists()
    assert not AccessToken.objects.filter(application=application).exists()


def test_body_client_id_naming_another_client_than_basic_is_invalid_client(api_client, browser, application):
    other = ApplicationFactory()
    code = obtain_code(browser, application)
    response = api_client.post(
        TOKEN_URL,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri(application),
            "client_id": other.client_id,
        },
        HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
    )
    assert_oauth_error(response, 401, "invalid_client")
    assert response["WWW-Authenticate"] == 'Basic realm="oauth"'
    assert not AccessToken.objects.filter(application__in=[application, other]).exists()


def test_body_client_id_equal_to_basic_client_is_accepted(api_client, browser, application):
    code = obtain_code(browser, application)
    response = api_client.post(
        TOKEN_URL,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri(application),
            "client_id": application.client_id,
        },
        HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
    )
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("url", [TOKEN_URL, REFRESH_URL, REVOKE_URL, INTROSPECT_URL])
@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_machine_endpoints_answer_other_methods_with_a_json_405(client, url, method):
    response = getattr(client, method)(url)
    assert_oauth_error(response, 405, "invalid_request")
    assert response["Allow"] == "POST"
    assert response["X-Request-Id"]
