"""The operator registers an OAuth client in headless Chromium and sees its secret exactly once."""

import pytest
from django.contrib.auth.hashers import check_password
from oauth2_provider.models import Application
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from accounts.tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def wait_for(driver, css_selector: str):
    """Clicking submit returns before the next page is there; wait for it instead of racing it."""
    return WebDriverWait(driver, 30).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css_selector))
    )


def test_operator_registers_a_client_in_the_browser_and_sees_the_secret_once(chromium, live_server):
    operator = UserFactory(username="operator", is_staff=True, is_superuser=True)
    chromium.get(f"{live_server.url}/admin/login/?next=/admin/oauth2_provider/application/add/")
    chromium.find_element(By.ID, "id_username").send_keys(operator.username)
    chromium.find_element(By.ID, "id_password").send_keys(PASSWORD)
    chromium.find_element(By.CSS_SELECTOR, "input[type=submit]").click()

    wait_for(chromium, "#id_name").send_keys("Browser Registered App")
    chromium.find_element(By.ID, "id_redirect_uris").send_keys("https://app.example/callback")
    chromium.find_element(By.CSS_SELECTOR, "input[name=client_type][value=confidential]").click()
    chromium.find_element(By.ID, "id_logo").send_keys("https://app.example/logo.png")
    chromium.find_element(By.ID, "id_app_link").send_keys("https://app.example")
    for scope in ("READ_PROFILE", "READ_BOOKING"):
        chromium.find_element(By.CSS_SELECTOR, f"input[name=scope_ceiling][value={scope}]").click()
    chromium.find_element(By.CSS_SELECTOR, "input[name=_save]").click()

    client_id = wait_for(chromium, "code[data-label='Client ID']").text
    secret = chromium.find_element(By.CSS_SELECTOR, "code.revealed-secret").text
    assert "will not be shown again" in chromium.page_source
    application = Application.objects.get(client_id=client_id)
    assert application.name == "Browser Registered App"
    assert application.profile.scope_ceiling == ["READ_PROFILE", "READ_BOOKING"]
    assert check_password(secret, application.client_secret)
    assert secret not in application.client_secret

    chromium.refresh()
    assert "cannot be shown again" in chromium.page_source
    assert secret not in chromium.page_source
    chromium.find_element(By.LINK_TEXT, "Go to Browser Registered App").click()
    wait_for(chromium, "#id_name")
    assert client_id in chromium.page_source
    assert secret not in chromium.page_source
