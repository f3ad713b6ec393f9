"""Where generic OAuth clients look: the aliases of the authorize, token, revoke and introspect
endpoints answer as the paths the RFC 8414 metadata names; consent is asked once per client and
scope set (django-oauth-toolkit's `approval_prompt=auto`), in headless Chromium with Authlib as the
app; the sign-in page names the application asking and where it will send the user."""

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from authlib.integrations.requests_client import OAuth2Session
from oauth2_provider.models import AccessToken
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from accounts.oauth.services import oauth_app_access_revoke
from accounts.tests.factories import ApplicationFactory, UserFactory
from accounts.tests.oauth_support import PASSWORD, basic_auth, obtain_code, sign_in

ALIASES = {
    "authorization_endpoint": ["/oauth/authorize", "/api/auth/oauth/authorize"],
    "token_endpoint": ["/oauth/token"],
    "revocation_endpoint": ["/oauth/revoke"],
    "introspection_endpoint": ["/oauth/introspect"],
}


def path_of(url: str) -> str:
    return urlsplit(url).path


@pytest.mark.django_db
def test_the_metadata_names_the_endpoints_and_each_alias_answers_as_its_endpoint(client):
    application = ApplicationFactory(name="Team Planner")
    metadata = client.get("/.well-known/oauth-authorization-server").json()
    assert path_of(metadata["authorization_endpoint"]) == "/auth/oauth2/authorize"
    assert path_of(metadata["token_endpoint"]) == "/api/auth/oauth/token"
    query = urlencode({"client_id": application.client_id, "redirect_uri": application.redirect_uris, "state": "s"})
    credentials = {"HTTP_AUTHORIZATION": basic_auth(application.client_id, application.raw_client_secret)}

    def answers(name: str, path: str) -> list:
        if name == "authorization_endpoint":
            # Signed out: the sign-in page, coming back to the same path.
            response = client.get(f"{path}?{query}")
            next_url = parse_qs(urlsplit(response["Location"]).query)["next"]
            return [response.status_code, path_of(response["Location"]), next_url == [f"{path}?{query}"]]
        body = {"grant_type": "authorization_code", "code": "nope", "token": "nope"}
        return [
            (response.status_code, response.content)
            for response in (client.get(path), client.post(path, body), client.post(path, body, **credentials))
        ]

    for name, aliases in ALIASES.items():
        named = answers(name, path_of(metadata[name]))
        for alias in aliases:
            assert answers(name, alias) == named, alias
    assert answers("authorization_endpoint", "/auth/oauth2/authorize") == [302, "/auth/login", True]
    assert [status for status, _ in answers("token_endpoint", "/oauth/token")] == [405, 401, 400]


@pytest.mark.django_db
def test_consent_is_asked_again_after_the_user_takes_access_back(client):
    user = UserFactory()
    application = ApplicationFactory(redirect_uris="http://127.0.0.1:8765/callback")
    sign_in(client, user)
    code = obtain_code(client, application, scope="READ_PROFILE")
    exchanged = client.post(
        "/oauth/token",
        {"grant_type": "authorization_code", "code": code, "redirect_uri": application.redirect_uris},
        HTTP_AUTHORIZATION=basic_auth(application.client_id, application.raw_client_secret),
    )
    assert exchanged.status_code == 200, exchanged.content
    query = urlencode({"client_id": application.client_id, "scope": "READ_PROFILE", "state": "again"})

    again = client.get(f"/oauth/authorize?{query}")
    assert again.status_code == 302 and "code=" in again["Location"]

    oauth_app_access_revoke(user=user, application=application)
    after_revoke = client.get(f"/oauth/authorize?{query}")
    assert after_revoke.status_code == 200
    assert b'id="allow"' in after_revoke.content


# --- the browser flow ---------------------------------------------------------------------------


@pytest.fixture
def plain_http_on_loopback(monkeypatch):
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")


def open_authorize(driver, session: OAuth2Session, base: str, path: str, **extra) -> str:
    url, _state = session.create_authorization_url(f"{base}{path}", **extra)
    driver.get(url)
    return url


def landed(driver, redirect_uri: str) -> dict[str, list[str]]:
    WebDriverWait(driver, 15).until(expected_conditions.url_contains("/healthz"))
    assert driver.current_url.startswith(redirect_uri + "?")
    return parse_qs(urlsplit(driver.current_url).query)


@pytest.mark.django_db(transaction=True)
def test_a_client_already_allowed_gets_its_code_without_the_consent_page(chromium, live_server, plain_http_on_loopback):
    user = UserFactory(username="ada")
    redirect_uri = f"{live_server.url}/healthz"
    application = ApplicationFactory(name="Team Planner", redirect_uris=redirect_uri)
    session = OAuth2Session(
        client_id=application.client_id,
        client_secret=application.raw_client_secret,
        scope="READ_PROFILE WRITE_BOOKING",
        redirect_uri=redirect_uri,
    )

    # First time, at the alias generic clients use: the sign-in page says who asks, then consent.
    open_authorize(chromium, session, live_server.url, "/oauth/authorize")
    assert path_of(chromium.current_url) == "/auth/login"
    assert chromium.find_element(By.ID, "asker-name").text == "Team Planner"
    assert chromium.find_element(By.ID, "asker-host").text == urlsplit(live_server.url).netloc
    chromium.find_element(By.ID, "id_username").send_keys("ada")
    chromium.find_element(By.ID, "id_password").send_keys(PASSWORD)
    chromium.find_element(By.ID, "sign-in").click()
    WebDriverWait(chromium, 15).until(expected_conditions.presence_of_element_located((By.ID, "allow")))
    chromium.find_element(By.ID, "allow").click()
    first = landed(chromium, redirect_uri)
    token = session.fetch_token(f"{live_server.url}/oauth/token", code=first["code"][0])
    assert token["scope"] == "READ_PROFILE WRITE_BOOKING"

    # Again, with the same scopes (here at Zapier's path): straight back with a new code.
    open_authorize(chromium, session, live_server.url, "/api/auth/oauth/authorize")
    second = landed(chromium, redirect_uri)
    assert second["code"] != first["code"]
    assert session.fetch_token(f"{live_server.url}/api/auth/oauth/token", code=second["code"][0])["access_token"]
    assert AccessToken.objects.filter(user=user, application=application).count() == 2

    # A subset of what was allowed: no page either (READ_BOOKING comes with WRITE_BOOKING).
    narrower = OAuth2Session(client_id=application.client_id, scope="READ_BOOKING", redirect_uri=redirect_uri)
    open_authorize(chromium, narrower, live_server.url, "/auth/oauth2/authorize")
    assert "code" in landed(chromium, redirect_uri)

    # A scope never allowed, or approval_prompt=force: the consent page.
    wider = OAuth2Session(
        client_id=application.client_id, scope="READ_PROFILE WRITE_SCHEDULE", redirect_uri=redirect_uri
    )
    open_authorize(chromium, wider, live_server.url, "/oauth/authorize")
    WebDriverWait(chromium, 15).until(expected_conditions.presence_of_element_located((By.ID, "allow")))
    assert [item.get_attribute("data-scope") for item in chromium.find_elements(By.CSS_SELECTOR, "#scopes li")] == [
        "READ_PROFILE",
        "WRITE_SCHEDULE",
    ]
    open_authorize(chromium, session, live_server.url, "/oauth/authorize", approval_prompt="force")
    WebDriverWait(chromium, 15).until(expected_conditions.presence_of_element_located((By.ID, "allow")))
