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


@pytest.fixture(scope="module")
def recorded_server():
    """Google's and Microsoft's recorded answers, served on loopback (calendars/tests/recorded_server.py)."""
    from calendars.tests.recorded_server import RecordedServer

    server = RecordedServer()
    yield server
    server.stop()


@pytest.fixture
def oauth_apps(settings, recorded_server):
    """Both providers configured, their endpoints pointed at the recorded server; the server's
    routes and the requests it saw start empty for each test."""
    recorded_server.routes.clear()
    recorded_server.requests.clear()
    settings.CALENDARS = {
        **settings.CALENDARS,
        "GOOGLE": {
            "CLIENT_ID": "1234567890-recorded.apps.googleusercontent.com",
            "CLIENT_SECRET": "GOCSPX-recorded-secret",
            "AUTHORIZE_URL": "https://accounts.google.com/o/oauth2/v2/auth",
            "TOKEN_URL": f"{recorded_server.url}/token",
            "API_URL": f"{recorded_server.url}/calendar/v3",
        },
        "MICROSOFT": {
            "CLIENT_ID": "00000000-0000-0000-0000-00000000cafe",
            "CLIENT_SECRET": "recorded~secret",
            "TENANT": "common",
            "LOGIN_URL": f"{recorded_server.url}/login",
            "API_URL": f"{recorded_server.url}/v1.0",
        },
        "OAUTH_REDIR_HOSTS": ["app.example.org"],
    }
    return recorded_server
