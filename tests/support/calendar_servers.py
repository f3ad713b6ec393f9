import caldav
import pytest
import requests

from calendars.tests.servers import PASSWORD, FeedServer, RadicaleServer


@pytest.fixture(scope="module")
def radicale_server(tmp_path_factory):
    """One Radicale per test module (starting one is cheap, but not free)."""
    server = RadicaleServer(tmp_path_factory.mktemp("radicale"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def feed_server():
    server = FeedServer()
    yield server
    server.stop()


@pytest.fixture
def caldav_account(radicale_server):
    """A fresh account on the shared server: (url, username, password)."""
    return radicale_server.url, radicale_server.new_account(), PASSWORD


@pytest.fixture
def make_calendar(caldav_account):
    """A calendar of this test's account, filled with the given iCalendar objects."""
    url, username, password = caldav_account

    def make(*events: str, name: str = "Work"):
        client = caldav.DAVClient(url=url, auth=requests.auth.HTTPBasicAuth(username, password))
        calendar = client.principal().make_calendar(name=name)
        for event in events:
            calendar.save_event(event)
        return calendar

    return make
