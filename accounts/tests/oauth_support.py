"""Helpers shared by the OAuth tests: PKCE pairs and a signed-in browser walk through consent."""

import base64
import hashlib
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

from accounts.tests.factories import PASSWORD

AUTHORIZE_URL = "/auth/oauth2/authorize"
TOKEN_URL = "/api/auth/oauth/token"
REFRESH_URL = "/api/auth/oauth/refreshToken"


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize_url(application, **params) -> str:
    query = {"client_id": application.client_id, "redirect_uri": application.redirect_uris.split()[0]}
    query.update(params)
    query = {key: value for key, value in query.items() if value is not None}
    return AUTHORIZE_URL + "?" + urlencode(query)


def sign_in(client, user) -> None:
    assert client.login(username=user.username, password=PASSWORD)


def redirect_params(response) -> dict[str, str]:
    assert response.status_code == 302, response.content
    return {key: values[0] for key, values in parse_qs(urlsplit(response["Location"]).query).items()}


def obtain_code(client, application, *, decision: str = "allow", **params) -> str:
    """Consent as the signed-in user and return the authorization code from the redirect."""
    response = client.post(authorize_url(application, **params), {"decision": decision})
    return redirect_params(response)["code"]


def basic_auth(client_id: str, client_secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
