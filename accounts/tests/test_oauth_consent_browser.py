"""The sign-in and consent pages in headless Chromium, landing on a real redirect URI."""

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from oauth2_provider.models import Grant
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from accounts.tests.factories import ApplicationFactory, UserFactory
from accounts.tests.oauth_support import PASSWORD, pkce_pair

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def user():
    return UserFactory(username="ada")


@pytest.fixture
def application(live_server):
    # /healthz is a real page of the live server: the browser lands somewhere that answers.
    return ApplicationFactory(name="Team Planner", redirect_uris=f"{live_server.url}/healthz")


def start_flow(driver, live_server, application, user, state):
    _verifier, challenge = pkce_pair()
    query = urlencode(
        {
            "client_id": application.client_id,
            "redirect_uri": application.redirect_uris,
            "scope": "READ_PROFILE,WRITE_BOOKING",
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
    )
    driver.get(f"{live_server.url}/auth/oauth2/authorize?{query}")
    # Not signed in yet: the sign-in page comes first, then the consent page.
    assert urlsplit(driver.current_url).path == "/auth/login"
    driver.find_element(By.ID, "id_username").send_keys(user.username)
    driver.find_element(By.ID, "id_password").send_keys(PASSWORD)
    driver.find_element(By.ID, "sign-in").click()
    WebDriverWait(driver, 15).until(expected_conditions.presence_of_element_located((By.ID, "allow")))


def landed_params(driver, application) -> dict[str, list[str]]:
    WebDriverWait(driver, 15).until(expected_conditions.url_contains("/healthz"))
    assert driver.current_url.startswith(application.redirect_uris + "?")
    return parse_qs(urlsplit(driver.current_url).query)


def test_sign_in_consent_and_allow_land_on_the_redirect_uri_with_a_code(chromium, live_server, application, user):
    state = "state with spaces & symbols"
    start_flow(chromium, live_server, application, user, state)

    assert "Team Planner" in chromium.find_element(By.ID, "app-name").text
    assert chromium.find_element(By.ID, "account").text == "ada"
    assert chromium.find_element(By.ID, "redirect-host").text == urlsplit(live_server.url).netloc
    scope_lines = [item.text for item in chromium.find_elements(By.CSS_SELECTOR, "#scopes li")]
    assert scope_lines == [
        "Read your profile: name, username, e-mail address and time zone",
        "Create, reschedule and cancel your bookings",
    ]

    chromium.find_element(By.ID, "allow").click()
    params = landed_params(chromium, application)
    assert params["state"] == [state]
    assert params["code"] == [Grant.objects.get().code]
    assert '"status": "ok"' in chromium.page_source or '"status":"ok"' in chromium.page_source


def test_deny_lands_on_the_redirect_uri_with_access_denied(chromium, live_server, application, user):
    start_flow(chromium, live_server, application, user, "s-42")
    chromium.find_element(By.ID, "deny").click()
    params = landed_params(chromium, application)
    assert params["error"] == ["access_denied"]
    assert params["state"] == ["s-42"]
    assert "code" not in params
    assert not Grant.objects.exists()
