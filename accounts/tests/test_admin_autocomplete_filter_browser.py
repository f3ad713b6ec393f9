"""The membership list's team filter in headless Chromium: staff type part of a team's name in the
filter's box, pick the team the admin's autocomplete offers, and the list shows that team's members
only; clearing the box shows every membership again. The sidebar never lists the teams."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from accounts.tests.factories import PASSWORD, MembershipFactory, TeamFactory, UserFactory
from tests.support.browser import headless_chromium

pytestmark = pytest.mark.django_db(transaction=True)

TEAM_BOX = "select[name='team__id__exact'] + .select2"  # the box select2 puts after the filter's select


@pytest.fixture
def browser():
    with headless_chromium("--window-size=1400,1000") as driver:
        yield driver


def wait(driver):
    return WebDriverWait(driver, 30)


def listed_emails(driver) -> set[str]:
    return {cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "#result_list td.field-user_email")}


def test_staff_filter_memberships_by_a_team_chosen_by_typing(browser, live_server):
    operator = UserFactory(username="operator", is_staff=True, is_superuser=True)
    wanted = TeamFactory(name="Orbital Mechanics")
    other = TeamFactory(name="Customer Success")
    members = {MembershipFactory(team=wanted, role="OWNER").user.email, MembershipFactory(team=wanted).user.email}
    outsider = MembershipFactory(team=other, role="OWNER").user.email

    browser.get(f"{live_server.url}/admin/login/?next=/admin/accounts/membership/")
    wait(browser).until(expected_conditions.presence_of_element_located((By.ID, "id_username"))).send_keys(
        operator.username
    )
    browser.find_element(By.ID, "id_password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait(browser).until(expected_conditions.presence_of_element_located((By.ID, "result_list")))
    assert listed_emails(browser) == members | {outsider}
    sidebar = browser.find_element(By.ID, "changelist-filter").text
    assert "Customer Success" not in sidebar and "Orbital Mechanics" not in sidebar

    # Select2 replaces the team filter's select box; typing asks the admin's autocomplete view.
    team_filter = browser.find_element(By.CSS_SELECTOR, TEAM_BOX)
    team_filter.click()
    open_box = (By.CSS_SELECTOR, ".select2-container--open .select2-search__field")
    search = wait(browser).until(expected_conditions.element_to_be_clickable(open_box))
    search.send_keys("orbit")
    option = wait(browser).until(
        expected_conditions.element_to_be_clickable(
            (By.XPATH, "//li[contains(@class, 'select2-results__option') and text()='Orbital Mechanics']")
        )
    )
    option.click()

    wait(browser).until(expected_conditions.url_contains(f"team__id__exact={wanted.pk}"))
    wait(browser).until(expected_conditions.presence_of_element_located((By.ID, "result_list")))
    assert listed_emails(browser) == members
    chosen = browser.find_element(By.CSS_SELECTOR, f"{TEAM_BOX} .select2-selection__rendered")
    assert "Orbital Mechanics" in chosen.text

    # Clearing the box (select2's "×") lists every membership again.
    browser.find_element(By.CSS_SELECTOR, f"{TEAM_BOX} .select2-selection__clear").click()
    wait(browser).until(lambda driver: "team__id__exact" not in driver.current_url)
    wait(browser).until(expected_conditions.presence_of_element_located((By.ID, "result_list")))
    assert listed_emails(browser) == members | {outsider}
