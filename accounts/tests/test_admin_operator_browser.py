"""The operator's first hour in headless Chromium at 1400 px: sign in to the back office, register an
OAuth client and see its secret once, then find the payments and memberships lists, which must fit
the window. Screenshots of every step go to var/screenshots/<test name>/ (the test prints the path)."""

import uuid
from io import StringIO
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from django.contrib.auth.hashers import check_password
from django.core.management import call_command
from oauth2_provider.models import Application
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from accounts.tests.factories import PASSWORD, MembershipFactory, TeamFactory, UserFactory
from demo.management.commands.seed_demo import DEMO_USER
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory
from tests.support.browser import headless_chromium

pytestmark = pytest.mark.django_db(transaction=True)

WIDTH = 1400


@pytest.fixture
def browser():
    with headless_chromium(f"--window-size={WIDTH},1000") as driver:
        yield driver


@pytest.fixture
def screenshots(request):
    folder = Path(settings.BASE_DIR) / "var" / "screenshots" / request.node.name
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    print(f"\nscreenshots: {folder}")

    def shoot(driver, name: str) -> None:
        driver.save_screenshot(str(folder / f"{name}.png"))

    return shoot


def wait_for(driver, css_selector: str):
    return WebDriverWait(driver, 30).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css_selector))
    )


def assert_fits_the_window(driver):
    """Neither the page nor a changelist's results box (which scrolls on its own) is wider than shown."""
    widths = driver.execute_script(
        "const boxes = [document.documentElement, ...document.querySelectorAll('#changelist .results')];"
        "return boxes.map(box => [box.id || box.className || box.tagName, box.scrollWidth, box.clientWidth]);"
    )
    for box, scroll_width, client_width in widths:
        assert scroll_width <= client_width, f"{box} is {scroll_width} px wide in {client_width} px"


def line_count(driver, element) -> int:
    """How many lines the text of `element` takes (1 = not wrapped)."""
    return driver.execute_script(
        "const range = document.createRange(); range.selectNodeContents(arguments[0]);"
        "const tops = new Set([...range.getClientRects()].map(rect => Math.round(rect.top)));"
        "return tops.size;",
        element,
    )


def payments_with_real_looking_ids(count: int):
    for number in range(count):
        organizer = UserFactory(email=f"organizer.with.a.long.name.{number}@scheduling-example.org")
        booking = BookingFactory(organizer=organizer, uid=uuid.uuid4().hex)
        PaymentFactory(booking=booking, uid=str(uuid.uuid4()), amount=123456, fee=4321, currency="eur")


def test_operator_registers_a_client_and_finds_payments_and_memberships_at_1400px(browser, live_server, screenshots):
    operator = UserFactory(username="operator", is_staff=True, is_superuser=True)
    payments_with_real_looking_ids(8)
    team = TeamFactory(name="Customer Success")
    MembershipFactory(team=team, role="OWNER")
    MembershipFactory(team=team, accepted=False)

    browser.get(f"{live_server.url}/admin/")
    wait_for(browser, "#id_username").send_keys(operator.username)
    browser.find_element(By.ID, "id_password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait_for(browser, "#content-main")
    screenshots(browser, "01-index")
    assert browser.title == f"Operations | {settings.SERVICE_NAME} back office"
    assert browser.find_element(By.CSS_SELECTOR, "#site-name a").text == f"{settings.SERVICE_NAME} back office"
    assert browser.find_element(By.LINK_TEXT, "VIEW SITE").get_attribute("href") == f"{live_server.url}/v1/docs"
    assert_fits_the_window(browser)

    # Register a client.
    browser.find_element(By.CSS_SELECTOR, "a[href='/admin/oauth2_provider/application/add/']").click()
    wait_for(browser, "#id_name").send_keys("Reporting Dashboard")
    browser.find_element(By.ID, "id_redirect_uris").send_keys("https://reports.example/oauth/callback")
    browser.find_element(By.CSS_SELECTOR, "input[name=client_type][value=confidential]").click()
    logo_url = "https://cdn.reports.example/static/brand/logos/reporting-dashboard-logo-256x256.png"
    browser.find_element(By.ID, "id_logo").send_keys(logo_url)
    browser.find_element(By.ID, "id_app_link").send_keys("https://reports.example/apps/scheduling-integration")
    for scope in ("READ_PROFILE", "READ_BOOKING"):
        browser.find_element(By.CSS_SELECTOR, f"input[name=scope_ceiling][value={scope}]").click()
    logo_input = browser.find_element(By.ID, "id_logo")
    # The whole URL is visible: the input is wider than the text it holds.
    assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth;", logo_input)
    screenshots(browser, "02-add-client")
    browser.find_element(By.CSS_SELECTOR, "input[name=_save]").click()

    client_id = wait_for(browser, "code[data-label='Client ID']").text
    secret = browser.find_element(By.CSS_SELECTOR, "code.revealed-secret").text
    screenshots(browser, "03-secret-shown-once")
    application = Application.objects.get(client_id=client_id)
    assert check_password(secret, application.client_secret)
    assert application.profile.scope_ceiling == ["READ_PROFILE", "READ_BOOKING"]

    browser.refresh()
    wait_for(browser, "#content-main")
    assert secret not in browser.page_source
    assert "cannot be shown again" in browser.page_source
    screenshots(browser, "04-secret-not-shown-again")

    browser.find_element(By.LINK_TEXT, "Go to Reporting Dashboard").click()
    button = wait_for(browser, "#issue-new-secret")
    history = browser.find_element(By.CSS_SELECTOR, ".object-tools a.historylink")
    # The secret button looks like the admin's own object tools (same pill, colours and height).
    for css in ("background-color", "color", "border-radius", "font-size", "text-transform"):
        assert button.value_of_css_property(css) == history.value_of_css_property(css), css
    assert button.size["height"] == history.size["height"]
    assert browser.find_element(By.CSS_SELECTOR, ".object-tools a.viewsitelink").get_attribute("href") == (
        "https://reports.example/apps/scheduling-integration"
    )
    assert secret not in browser.page_source
    screenshots(browser, "05-client-page")

    # Payments: found from the index, the whole list fits, booking ids on one line.
    browser.get(f"{live_server.url}/admin/")
    browser.find_element(By.CSS_SELECTOR, "a[href='/admin/payments/payment/']").click()
    wait_for(browser, "#result_list")
    screenshots(browser, "06-payments")
    assert_fits_the_window(browser)
    booking_cells = browser.find_elements(By.CSS_SELECTOR, "#result_list td.field-booking_uid")
    assert len(booking_cells) == 8
    for cell in booking_cells:
        assert line_count(browser, cell) == 1, cell.text

    browser.get(f"{live_server.url}/admin/")
    browser.find_element(By.CSS_SELECTOR, "a[href='/admin/accounts/membership/']").click()
    wait_for(browser, "#result_list")
    screenshots(browser, "07-memberships")
    assert_fits_the_window(browser)
    assert "Customer Success" in browser.find_element(By.ID, "result_list").text


def test_demo_user_allows_the_demo_app_and_lands_on_the_callback_page(browser, live_server, screenshots, settings):
    settings.DEBUG = True
    call_command("seed_demo", base_url=live_server.url, stdout=StringIO())
    settings.DEBUG = False
    authorize = (
        f"{live_server.url}/auth/oauth2/authorize?client_id=demo-client&response_type=code"
        f"&redirect_uri={live_server.url}/demo/callback&scope=READ_PROFILE&state=walk-through"
    )

    browser.get(authorize)
    wait_for(browser, "#id_username").send_keys(DEMO_USER["username"])
    browser.find_element(By.ID, "id_password").send_keys(DEMO_USER["password"])
    browser.find_element(By.CSS_SELECTOR, "button[type=submit], input[type=submit]").click()
    wait_for(browser, "#allow").click()

    code = wait_for(browser, "#authorization-code").text
    screenshots(browser, "01-demo-callback")
    assert parse_qs(urlsplit(browser.current_url).query)["code"] == [code]
    command = browser.find_element(By.ID, "exchange-command").text
    assert f"code={code}" in command
    assert f"redirect_uri={live_server.url}/demo/callback" in command
    assert_fits_the_window(browser)
