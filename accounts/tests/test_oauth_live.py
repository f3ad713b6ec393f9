"""The whole authorization code flow against a live server, driven by real OAuth client libraries.

Authlib and requests-oauthlib play the third-party app; a `requests` session with a cookie jar
plays the user's browser on the sign-in and consent pages (the Chromium tests are elsewhere).
"""

import re
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken
from requests_oauthlib import OAuth2Session as RequestsOAuthlibSession

from accounts.tests.factories import ApplicationFactory, UserFactory
from accounts.tests.oauth_support import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)

CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture(autouse=True)
def plain_http_on_loopback(monkeypatch):
    # Both libraries refuse http:// unless told the transport is a trusted test loopback.
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")


@pytest.fixture
def user():
    return UserFactory()


@pytest.fixture(autouse=True)
def close_http_sessions(monkeypatch):
    """Close every keep-alive connection at the end of a test.

    The live server serves a kept-alive connection from one thread that holds its own database
    connection until the socket closes; left open, it would outlive the test database.
    """
    opened = []
    original_init = requests.Session.__init__

    def tracking_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(requests.Session, "__init__", tracking_init)
    yield
    for session in opened:
        session.close()


@pytest.fixture
def metadata(live_server):
    response = requests.get(f"{live_server.url}/.well-known/oauth-authorization-server", timeout=10)
    assert response.status_code == 200
    return response.json()


def redirect_uri_of(live_server) -> str:
    return f"{live_server.url}/healthz"


class Browser:
    """A user agent with a cookie jar that signs in and answers the consent page."""

    def __init__(self, base_url: str, user):
        self.base_url = base_url
        self.session = requests.Session()
        login_page = self.session.get(f"{base_url}/auth/login", timeout=10)
        response = self.session.post(
            f"{base_url}/auth/login",
            data={"csrfmiddlewaretoken": self._csrf(login_page.text), "username": user.username, "password": PASSWORD},
            allow_redirects=False,
            timeout=10,
        )
        assert response.status_code == 302, response.text

    @staticmethod
    def _csrf(html: str) -> str:
        return CSRF_FIELD.search(html).group(1)

    def consent(self, authorization_url: str, decision: str = "allow") -> str:
        page = self.session.get(authorization_url, allow_redirects=False, timeout=10)
        assert page.status_code == 200, page.text
        form_action = re.search(r'<form method="post" action="([^"]+)"', page.text).group(1).replace("&amp;", "&")
        response = self.session.post(
            urljoin(self.base_url, form_action),
            data={"csrfmiddlewaretoken": self._csrf(page.text), "decision": decision},
            allow_redirects=False,
            timeout=10,
        )
        assert response.status_code == 302, response.text
        return response.headers["Location"]


def test_confidential_client_with_pkce_end_to_end_with_authlib(live_server, metadata, user):
    application = ApplicationFactory(redirect_uris=redirect_uri_of(live_server))
    session = OAuth2Session(
        client_id=application.client_id,
        client_secret=application.raw_client_secret,
        scope="READ_PROFILE READ_BOOKING",
        redirect_uri=redirect_uri_of(live_server),
        code_challenge_method="S256",
        token_endpoint_auth_method="client_secret_basic",
    )
    verifier = "v" * 20 + "-confidential-client-code-verifier-0123456789"
    authorization_url, state = session.create_authorization_url(
        metadata["authorization_endpoint"], code_verifier=verifier
    )
    callback = Browser(live_server.url, user).consent(authorization_url)
    assert callback.startswith(redirect_uri_of(live_server) + "?")

    token = session.fetch_token(metadata["token_endpoint"], authorization_response=callback, code_verifier=verifier)
    assert token["token_type"] == "Bearer"
    assert token["scope"] == "READ_PROFILE READ_BOOKING"
    assert token["expires_in"] == 1800

    me = session.get(f"{live_server.url}/api/auth/oauth/me", timeout=10)
    assert me.status_code == 200
    assert me.json()["username"] == user.username

    # Introspection (RFC 7662), authenticated as the client.
    introspection = session.introspect_token(metadata["introspection_endpoint"], token=token["access_token"])
    assert introspection.json()["active"] is True
    assert introspection.json()["client_id"] == application.client_id

    # Refresh through the library (refresh token in the body), then Cal.com style (Bearer header).
    refreshed = session.refresh_token(f"{live_server.url}/api/auth/oauth/refreshToken")
    assert refreshed["refresh_token"] != token["refresh_token"]
    header_refresh = requests.post(
        f"{live_server.url}/api/auth/oauth/refreshToken",
        data={"client_id": application.client_id, "client_secret": application.raw_client_secret},
        headers={"Authorization": f"Bearer {refreshed['refresh_token']}"},
        timeout=10,
    )
    assert header_refresh.status_code == 200
    latest = header_refresh.json()
    assert latest["refresh_token"] != refreshed["refresh_token"]
    assert header_refresh.headers["Cache-Control"] == "no-store"

    # Revocation (RFC 7009) of the refresh token ends the family, access token included.
    revoked = session.revoke_token(
        metadata["revocation_endpoint"], token=latest["refresh_token"], token_type_hint="refresh_token"
    )
    assert revoked.status_code == 200
    gone = requests.get(
        f"{live_server.url}/api/auth/oauth/me",
        headers={"Authorization": f"Bearer {latest['access_token']}"},
        timeout=10,
    )
    assert gone.status_code == 401
    assert gone.headers["WWW-Authenticate"] == 'Bearer realm="api", error="invalid_token"'
    after = session.introspect_token(metadata["introspection_endpoint"], token=latest["access_token"])
    assert after.json() == {"active": False}
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()


def test_public_client_with_pkce_end_to_end_with_authlib(live_server, metadata, user):
    application = ApplicationFactory(client_type=Application.CLIENT_PUBLIC, redirect_uris=redirect_uri_of(live_server))
    session = OAuth2Session(
        client_id=application.client_id,
        scope="READ_PROFILE",
        redirect_uri=redirect_uri_of(live_server),
        code_challenge_method="S256",
        token_endpoint_auth_method="none",
    )
    verifier = "p" * 43
    authorization_url, _state = session.create_authorization_url(
        metadata["authorization_endpoint"], code_verifier=verifier
    )
    assert f"code_challenge={create_s256_code_challenge(verifier)}" in authorization_url
    callback = Browser(live_server.url, user).consent(authorization_url)
    token = session.fetch_token(metadata["token_endpoint"], authorization_response=callback, code_verifier=verifier)
    assert session.get(f"{live_server.url}/api/auth/oauth/me", timeout=10).json()["id"] == user.pk

    refreshed = session.refresh_token(metadata["token_endpoint"])
    assert refreshed["access_token"] != token["access_token"]
    revoked = session.revoke_token(metadata["revocation_endpoint"], token=refreshed["access_token"])
    assert revoked.status_code == 200
    assert not AccessToken.objects.exists()


def test_denied_consent_sends_the_client_access_denied_with_its_state(live_server, metadata, user):
    application = ApplicationFactory(redirect_uris=redirect_uri_of(live_server))
    session = OAuth2Session(
        client_id=application.client_id,
        client_secret=application.raw_client_secret,
        scope="READ_PROFILE",
        redirect_uri=redirect_uri_of(live_server),
    )
    authorization_url, state = session.create_authorization_url(metadata["authorization_endpoint"])
    callback = Browser(live_server.url, user).consent(authorization_url, decision="deny")
    params = parse_qs(urlsplit(callback).query)
    assert params["error"] == ["access_denied"]
    assert params["state"] == [state]
    assert "code" not in params
    assert not Grant.objects.exists()


def test_confidential_client_with_requests_oauthlib_and_secret_in_body(live_server, metadata, user):
    application = ApplicationFactory(redirect_uris=redirect_uri_of(live_server))
    session = RequestsOAuthlibSession(
        application.client_id,
        redirect_uri=redirect_uri_of(live_server),
        scope=["READ_PROFILE", "READ_SCHEDULE"],
        pkce="S256",
    )
    authorization_url, _state = session.authorization_url(metadata["authorization_endpoint"])
    callback = Browser(live_server.url, user).consent(authorization_url)
    token = session.fetch_token(
        metadata["token_endpoint"],
        authorization_response=callback,
        client_secret=application.raw_client_secret,
        include_client_id=True,
    )
    assert token["scope"] == ["READ_PROFILE", "READ_SCHEDULE"]
    assert session.get(f"{live_server.url}/api/auth/oauth/me", timeout=10).status_code == 200

    refreshed = session.refresh_token(
        f"{live_server.url}/api/auth/oauth/refreshToken",
        client_id=application.client_id,
        client_secret=application.raw_client_secret,
    )
    assert refreshed["access_token"] != token["access_token"]
