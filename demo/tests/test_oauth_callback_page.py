"""The demo client's redirect URI shows the code and the ready command to exchange it."""

import base64
import re
import shlex
from html import unescape
from io import StringIO
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import call_command
from oauth2_provider.models import Application

from demo.management.commands.seed_demo import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_USER

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_data(settings):
    settings.DEBUG = True
    call_command("seed_demo", base_url="http://testserver", stdout=StringIO())
    settings.DEBUG = False


def exchange_command(page: str) -> list[str]:
    command = unescape(re.search(r'<pre id="exchange-command">(.*?)</pre>', page, re.S).group(1))
    return shlex.split(command.replace("\\\n", " "))


def test_after_allow_the_callback_page_shows_a_command_that_exchanges_the_code(client, demo_data):
    assert client.login(username=DEMO_USER["username"], password=DEMO_USER["password"])
    authorize = client.get(
        "/auth/oauth2/authorize",
        {
            "client_id": DEMO_CLIENT_ID,
            "redirect_uri": "http://testserver/demo/callback",
            "response_type": "code",
            "scope": "READ_PROFILE",
            "state": "demo state/1",
        },
    )
    assert authorize.status_code == 200
    allowed = client.post(authorize.context["action"], {"decision": "allow"})
    assert allowed.status_code == 302
    location = urlsplit(allowed["Location"])
    assert location.path == "/demo/callback"
    code = parse_qs(location.query)["code"][0]

    page = client.get(allowed["Location"])

    assert page.status_code == 200
    assert "no-store" in page["Cache-Control"]
    assert page["Referrer-Policy"] == "no-referrer"
    html = page.content.decode()
    assert f'<code id="authorization-code">{code}</code>' in html
    assert '<code id="state">demo state/1</code>' in html
    command = exchange_command(html)
    assert command[:4] == ["curl", "-s", "-u", f"{DEMO_CLIENT_ID}:{DEMO_CLIENT_SECRET}"]
    fields = dict(part.split("=", 1) for part in command if "=" in part and not part.startswith("http"))
    assert fields == {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": "http://testserver/demo/callback",
    }
    assert command[-1] == "http://testserver/api/auth/oauth/token"

    # The command's request, made with the test client, gets tokens.
    token = client.post(
        "/api/auth/oauth/token",
        fields,
        HTTP_AUTHORIZATION="Basic " + base64.b64encode(f"{DEMO_CLIENT_ID}:{DEMO_CLIENT_SECRET}".encode()).decode(),
    )
    assert token.status_code == 200, token.content
    assert token.json()["scope"] == "READ_PROFILE"


def test_a_denied_authorization_shows_the_error_not_a_404(client, demo_data):
    page = client.get("/demo/callback", {"error": "access_denied", "state": "s1"})

    assert page.status_code == 400
    assert "<code>access_denied</code>" in page.content.decode()


def test_without_the_demo_client_the_callback_does_not_exist(client):
    assert not Application.objects.filter(client_id=DEMO_CLIENT_ID).exists()

    response = client.get("/demo/callback", {"code": "abc", "state": "s"})

    assert response.status_code == 404
