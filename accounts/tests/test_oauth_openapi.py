"""The API reference shows the whole interface, OAuth included: every OAuth endpoint with its
request fields and documented statuses, security schemes that say how to get and use a credential,
a description that links to served guides, and real answers that match the document."""

import re

import pytest
import requests
import schemathesis
from django.test import override_settings
from drf_spectacular.validation import validate_schema
from oauth2_provider.models import Application
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from accounts.tests.factories import AccessTokenFactory, ApplicationFactory, UserFactory
from accounts.tests.oauth_support import authorize_url, basic_auth, obtain_code, pkce_pair, sign_in
from tests.support.browser import headless_chromium

pytestmark = pytest.mark.django_db

OAUTH_OPERATIONS = {
    ("/auth/oauth2/authorize", "get"): {"200", "302", "400"},
    ("/api/auth/oauth/authorize", "get"): {"200", "302", "400"},
    ("/api/auth/oauth/token", "post"): {"200", "400", "401", "405", "413"},
    ("/api/auth/oauth/refreshToken", "post"): {"200", "400", "401", "405", "413"},
    ("/api/auth/oauth/revoke", "post"): {"200", "400", "401", "405", "413"},
    ("/api/auth/oauth/introspect", "post"): {"200", "400", "401", "405", "413"},
    ("/api/auth/oauth/me", "get"): {"200", "400", "401", "403", "414", "429", "500", "503"},
    ("/.well-known/oauth-authorization-server", "get"): {"200", "400"},
}


@pytest.fixture
def document(client):
    return client.get("/v1/openapi.json").json()


def test_every_oauth_endpoint_is_documented_with_its_statuses(document):
    for (path, method), statuses in OAUTH_OPERATIONS.items():
        operation = document["paths"][path][method]
        assert set(operation["responses"]) == statuses, path
        assert "oauth" in operation["tags"]


def test_token_endpoints_take_form_and_json_bodies_and_answer_rfc6749_errors(document):
    token = document["paths"]["/api/auth/oauth/token"]["post"]
    content = token["requestBody"]["content"]
    # Documented as a form only (a generated client cannot offer one body in two media types);
    # the description says that the same fields as JSON are accepted.
    assert set(content) == {"application/x-www-form-urlencoded"}
    assert "JSON" in token["requestBody"]["description"]
    fields = document["components"]["schemas"]["OAuthTokenRequest"]["properties"]
    assert {
        "grant_type",
        "code",
        "redirect_uri",
        "code_verifier",
        "refresh_token",
        "client_id",
        "client_secret",
    } <= set(fields)
    error = document["components"]["schemas"]["OAuthError"]
    assert error["required"] == ["error", "error_description"]
    assert {"invalid_request", "invalid_client", "invalid_grant", "unsupported_grant_type", "invalid_scope"} <= set(
        error["properties"]["error"]["enum"]
    )
    assert "WWW-Authenticate" in token["responses"]["401"]["headers"]
    assert token["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/OAuthTokens"
    }
    authorize = document["paths"]["/auth/oauth2/authorize"]["get"]
    parameters = {parameter["name"]: parameter for parameter in authorize["parameters"]}
    assert set(parameters) == {
        "client_id",
        "redirect_uri",
        "state",
        "scope",
        "response_type",
        "code_challenge",
        "code_challenge_method",
        "approval_prompt",
    }
    assert parameters["code_challenge_method"]["schema"]["enum"] == ["S256"]


def test_security_schemes_say_how_to_get_a_token_and_how_to_use_an_api_key(document, settings):
    schemes = document["components"]["securitySchemes"]
    flow = schemes["oauth2"]["flows"]["authorizationCode"]
    assert flow["authorizationUrl"] == "http://testserver/auth/oauth2/authorize"
    assert flow["tokenUrl"] == "http://testserver/api/auth/oauth/token"
    assert flow["refreshUrl"] == "http://testserver/api/auth/oauth/refreshToken"
    assert flow["scopes"] == settings.SCOPES
    assert "PKCE" in schemes["oauth2"]["description"]
    assert "S256" in schemes["oauth2"]["description"]
    assert schemes["apiKeyBearer"]["scheme"] == "bearer"
    assert "every scope" in schemes["apiKeyBearer"]["description"]
    assert (schemes["apiKeyQuery"]["in"], schemes["apiKeyQuery"]["name"]) == ("query", "apiKey")
    assert schemes["oauthClientBasic"] == {
        "type": "http",
        "scheme": "basic",
        "description": schemes["oauthClientBasic"]["description"],
    }


def test_the_document_is_a_valid_openapi_document_that_schemathesis_loads(document):
    validate_schema(document)
    loaded = schemathesis.openapi.from_dict(document)
    assert loaded["/api/auth/oauth/token"]["POST"] is not None


def test_the_description_links_to_served_guides_never_to_repository_files(client, document):
    description = document["info"]["description"]
    links = re.findall(r"\]\(([^)]+)\)", description)
    assert "/docs/api.md" in links
    assert "/docs/oauth.md" in links
    for link in links:
        assert link.startswith("/docs/")
        page = client.get(link)
        assert page.status_code == 200, link
        assert page["Content-Type"].startswith("text/html")
    assert "docs/api.md" not in description.replace("/docs/api.md", "")
    assert "../" not in description


def test_guides_link_to_each_other_as_served_pages_and_unknown_guides_are_404(client):
    page = client.get("/docs/scheduling.md").content.decode()
    assert '<a href="/docs/webhook-payloads.md">' in page
    assert '<a href="/docs/api.md">' in page
    assert client.get("/docs/nope.md").status_code == 404
    assert client.get("/docs/..%2Fconfig%2Fsettings.py").status_code == 404
    assert "<script" not in client.get("/docs/api.md").content.decode()


# --- real answers against the document ----------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_real_oauth_answers_conform_to_the_document(live_server, client):
    document = requests.get(f"{live_server.url}/v1/openapi.json", timeout=10).json()
    loaded = schemathesis.openapi.from_dict(document)
    application = ApplicationFactory(redirect_uris="http://127.0.0.1:8765/callback")
    public = ApplicationFactory(client_type=Application.CLIENT_PUBLIC)
    user = UserFactory()
    sign_in(client, user)
    redirect_uri = "http://127.0.0.1:8765/callback"
    basic = {"Authorization": basic_auth(application.client_id, application.raw_client_secret)}

    def call(method, path, expected, **kwargs):
        response = requests.request(method, f"{live_server.url}{path}", timeout=10, allow_redirects=False, **kwargs)
        assert response.status_code == expected, (method, path, response.text)
        documented = document["paths"][path]
        # A method the endpoint refuses (405) is documented on the method it takes.
        operation_method = method if method.lower() in documented else next(iter(documented)).upper()
        assert str(expected) in documented[operation_method.lower()]["responses"]
        if response.headers.get("Content-Type", "").startswith("application/json"):
            loaded[path][operation_method].validate_response(response)
        return response

    verifier, challenge = pkce_pair()
    code = obtain_code(
        client, application, scope="READ_PROFILE", code_challenge=challenge, code_challenge_method="S256"
    )
    exchange = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    }
    tokens = call("POST", "/api/auth/oauth/token", 200, data=exchange, headers=basic).json()
    call("POST", "/api/auth/oauth/token", 400, data=exchange, headers=basic)  # a replayed code
    call("POST", "/api/auth/oauth/token", 400, json={"grant_type": "password"}, headers=basic)
    call("POST", "/api/auth/oauth/token", 401, data={**exchange, "client_secret": "wrong"}, headers={})
    call("GET", "/api/auth/oauth/token", 405)

    code = obtain_code(client, application, scope="READ_PROFILE")
    tokens = call(
        "POST",
        "/api/auth/oauth/token",
        200,
        json={"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri},
        headers=basic,
    ).json()
    body_auth = {"client_id": application.client_id, "client_secret": application.raw_client_secret}
    refreshed = call(
        "POST",
        "/api/auth/oauth/refreshToken",
        200,
        data=body_auth,
        headers={"Authorization": f"Bearer {tokens['refresh_token']}"},
    ).json()
    call("POST", "/api/auth/oauth/refreshToken", 401, data={"refresh_token": refreshed["refresh_token"]})

    access = {"Authorization": f"Bearer {refreshed['access_token']}"}
    call("GET", "/api/auth/oauth/me", 200, headers=access)
    call("GET", "/api/auth/oauth/me", 401)
    no_profile_scope = AccessTokenFactory(user=user, application=application, scope="READ_BOOKING").raw_token
    call("GET", "/api/auth/oauth/me", 403, headers={"Authorization": f"Bearer {no_profile_scope}"})

    introspected = call(
        "POST", "/api/auth/oauth/introspect", 200, data={"token": refreshed["access_token"]}, headers=basic
    ).json()
    assert introspected["active"] is True
    call("POST", "/api/auth/oauth/introspect", 400, data={}, headers=basic)
    # The rotated refresh token again: refused, and its whole family is revoked.
    call("POST", "/api/auth/oauth/refreshToken", 400, data={**body_auth, "refresh_token": tokens["refresh_token"]})
    call("POST", "/api/auth/oauth/introspect", 401, data={"token": "x", "client_id": public.client_id})
    call("POST", "/api/auth/oauth/revoke", 200, data={"token": refreshed["refresh_token"]}, headers=basic)
    call("POST", "/api/auth/oauth/revoke", 401, data={"token": "x", "client_id": "nobody", "client_secret": "x"})
    call("GET", "/api/auth/oauth/revoke", 405)

    call("GET", "/.well-known/oauth-authorization-server", 200)
    assert (
        requests.get(f"{live_server.url}{authorize_url(application)}", timeout=10, allow_redirects=False).status_code
        == 302
    )
    for url, status in (
        (authorize_url(application, scope="READ_PROFILE", state="s"), 200),
        (authorize_url(application, scope="READ_NOTHING", state="s"), 302),
        (authorize_url(application, client_id="unknown"), 400),
    ):
        response = client.get(url)
        assert response.status_code == status, url
        assert str(status) in document["paths"]["/auth/oauth2/authorize"]["get"]["responses"]


# --- unknown paths under /v1/ -------------------------------------------------------------------


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_an_unknown_path_under_v1_is_a_json_problem_whatever_debug_is(client, debug, method):
    with override_settings(DEBUG=debug):
        for path in ("/v1/nothing-here", "/v1/schedules/not-a-number/extra", "/v1/"):
            response = getattr(client, method)(path)
            assert response.status_code == 404, path
            assert response["Content-Type"] == "application/problem+json", path
            body = response.json()
            assert (body["status"], body["code"]) == (404, "not_found")
            assert body["requestId"] == response["X-Request-Id"]


@pytest.mark.django_db(transaction=True)
def test_the_docs_page_shows_the_oauth_endpoints_and_links_to_the_guides_in_a_browser(live_server):
    with headless_chromium("--window-size=1400,1000") as driver:
        driver.get(f"{live_server.url}/v1/docs")
        WebDriverWait(driver, 30).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".opblock")))
        text = driver.find_element(By.TAG_NAME, "body").text
        for path in OAUTH_OPERATIONS:
            assert path[0] in text
        links = [link.get_attribute("href") for link in driver.find_elements(By.CSS_SELECTOR, ".info a")]
        # The guides themselves are checked through the test client: Django's test live server
        # serves any file of the working directory at its path (MEDIA_URL is unset), so here it
        # would answer /docs/oauth.md with the raw file instead of the service's page.
        assert f"{live_server.url}/docs/oauth.md" in links
        assert f"{live_server.url}/docs/api.md" in links
