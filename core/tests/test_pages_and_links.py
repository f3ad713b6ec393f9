"""What a person opens in a browser leads where it says: `/` is a landing page whatever DEBUG is,
every link of the landing page, the guides and the API reference pages (followed recursively on
this site) opens, and so does every address README.md prints, with the demo data loaded as
`make run` loads it. (`make run`'s own banner is followed in devserver/tests/test_make_run.py.)"""

import io
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from django.conf import settings
from django.core.management import call_command
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from tests.support.browser import headless_chromium

pytestmark = pytest.mark.django_db

ROOT = Path(settings.BASE_DIR)
README = (ROOT / "README.md").read_text(encoding="utf-8")
BASE = "http://127.0.0.1:8000"
# Absolute paths README names that are not pages of this service: files of the machine, and the
# bases that API paths are appended to (the walk-through's `API=http://127.0.0.1:8000/v1`, `/v2/...`).
FILES = ("/dev/", "/srv/")
PREFIXES = ("/v1", "/v2/", "/v2/...")


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.found.append(value)


def links_of(html: str) -> list[str]:
    parser = Links()
    parser.feed(html)
    return parser.found


@pytest.fixture
def demo(settings):
    settings.ALLOWED_HOSTS = ["127.0.0.1", "testserver"]
    call_command("seed_demo", base_url=BASE, force=True, stdout=io.StringIO())


def opened(client, path: str):
    """GET `path` as a browser does: redirects followed."""
    response = client.get(path, follow=True, headers={"host": "127.0.0.1:8000"})
    return response


@pytest.mark.parametrize("debug", [True, False], ids=["DEBUG on", "DEBUG off"])
def test_the_root_is_a_landing_page_in_every_configuration(client, settings, debug):
    settings.DEBUG = debug

    response = client.get("/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "URLconf" not in page  # not Django's debug page
    for target in ("/v1/docs", "/v2/docs", "/docs/", "/admin/", "/v1/openapi.json", "/v2/openapi.json"):
        assert f'href="{target}"' in page


def test_every_link_of_the_landing_page_the_guides_and_the_references_opens(client, demo):
    seen: set[str] = set()
    pending = ["/"]
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        response = opened(client, path)
        assert response.status_code == 200, f"{path} answers {response.status_code}"
        content_type = response["Content-Type"]
        if content_type.startswith("text/html") and not path.startswith("/admin/"):
            for link in links_of(response.content.decode()):
                target = urlsplit(urljoin(f"{BASE}{path}", link))
                if target.netloc == "127.0.0.1:8000" and target.scheme == "http":
                    pending.append(target.path + (f"?{target.query}" if target.query else ""))
    # The crawl reached the pages a person looks for, and their assets.
    assert {"/", "/v1/docs", "/v2/docs", "/docs/", "/docs/api.md", "/docs/benchmarks.png"} <= seen
    assert any(path.startswith("/static/") for path in seen)


def test_anchors_within_the_guides_lead_to_headings(client):
    page = client.get("/docs/scheduling.md").content.decode()

    for anchor in re.findall(r'href="#([^"]+)"', page):
        assert f'id="{anchor}"' in page, anchor


def test_a_guide_title_shows_no_markdown(client):
    index = client.get("/docs/").content.decode()
    page = client.get("/docs/operations.md").content.decode()

    assert "`" not in index and "<code>make run</code>" in index
    assert "<title>Operating the service: make run, demo data and the back office" in page


def test_every_address_readme_prints_opens(client, demo, settings):
    settings.METRICS_ENABLED = True  # /metrics answers once its switch is on, as README says
    addresses = {path or "/" for path in re.findall(r"http://127\.0\.0\.1:8000(/[^\s\"'`)<,]*)?", README)}
    addresses -= set(PREFIXES)
    paths = {path for path in re.findall(r"`(/[^`\s]*)`", README) if not path.startswith(FILES)} - set(PREFIXES)
    assert {"/v1/docs", "/v2/docs", "/admin/", "/demo/callback"} <= paths | addresses

    for path in sorted(addresses | paths):
        path = path.replace("…", "CODE")
        response = opened(client, path)
        assert response.status_code != 404, f"README's {path} answers 404"
        assert response.status_code < 500, f"README's {path} answers {response.status_code}"


@pytest.mark.django_db(transaction=True)
def test_the_v2_reference_renders_the_v2_operations_in_a_browser_without_internet(live_server):
    # Any request leaving 127.0.0.1 fails, so the page must work from local assets alone.
    offline = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"
    with headless_chromium(offline) as driver:
        driver.get(f"{live_server.url}/")
        driver.find_element(By.LINK_TEXT, "Cal.com API v2 reference").click()
        WebDriverWait(driver, 30).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".opblock")))
        text = driver.find_element(By.TAG_NAME, "body").text
        assert "/v2/bookings/{bookingUid}/reschedule" in text
        assert "/v2/slots" in text
