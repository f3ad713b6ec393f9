"""CORS for the API (docs/api.md, "Calling from a browser"). Cal.com v1 answered
`Access-Control-Allow-Origin: *` and a 200 to every OPTIONS (calcom/cal.com,
apps/api/v1/lib/helpers/addRequestid.ts, tested by apps/api/v1/test/lib/middleware/addRequestId.test.ts),
so browser apps called it directly: here too, for the API's paths only, never with cookie
credentials."""

import pytest

from accounts.tests.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db

ORIGIN = "https://app.example.com"


def preflight(api_client, path: str, origin: str = ORIGIN):
    return api_client.options(
        path,
        HTTP_ORIGIN=origin,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type",
    )


@pytest.mark.parametrize("path", ["/v1/bookings", "/bookings/12", "/v1/webhooks", "/hooks", "/api/auth/oauth/me"])
def test_preflight_is_answered_before_authentication(api_client, path):
    response = preflight(api_client, path)
    assert response.status_code == 200
    assert response.content == b""
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "POST" in response["Access-Control-Allow-Methods"]
    assert "Authorization" in response["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Credentials" not in response


def test_an_authenticated_answer_allows_any_origin_and_exposes_the_api_headers(api_client):
    response = api_client.get("/v1/me", HTTP_ORIGIN=ORIGIN, HTTP_AUTHORIZATION=f"Bearer {ApiKeyFactory().raw_key}")
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    exposed = response["Access-Control-Expose-Headers"]
    for header in ("X-Request-Id", "Calcom-Response-ID", "Location", "RateLimit-Remaining", "Retry-After"):
        assert header in exposed
    assert "Access-Control-Allow-Credentials" not in response


def test_an_error_answer_carries_cors_too(api_client):
    response = api_client.get("/v1/me", HTTP_ORIGIN=ORIGIN)
    assert response.status_code == 401
    assert response["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("path", ["/admin/login/", "/auth/login", "/auth/apps", "/api/auth/oauth/token", "/healthz"])
def test_admin_sign_in_and_token_pages_get_no_cors(api_client, path):
    assert "Access-Control-Allow-Origin" not in api_client.get(path, HTTP_ORIGIN=ORIGIN)
    assert "Access-Control-Allow-Origin" not in preflight(api_client, path)


def test_without_an_origin_nothing_changes(api_client):
    response = api_client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {ApiKeyFactory().raw_key}")
    assert "Access-Control-Allow-Origin" not in response


def test_a_list_of_origins_echoes_an_allowed_one_and_varies_on_origin(api_client, settings):
    settings.CORS = {**settings.CORS, "ALLOWED_ORIGINS": [ORIGIN]}
    allowed = preflight(api_client, "/v1/bookings")
    refused = preflight(api_client, "/v1/bookings", origin="https://evil.example.net")
    assert allowed["Access-Control-Allow-Origin"] == ORIGIN
    assert "Origin" in allowed["Vary"]
    assert refused.status_code == 200
    assert "Access-Control-Allow-Origin" not in refused
    assert "Access-Control-Allow-Methods" not in refused
    answer = api_client.get("/v1/me", HTTP_ORIGIN="https://evil.example.net")
    assert "Access-Control-Allow-Origin" not in answer
    assert "Origin" in answer["Vary"]


def test_an_empty_list_turns_cors_off(api_client, settings):
    settings.CORS = {**settings.CORS, "ALLOWED_ORIGINS": []}
    assert "Access-Control-Allow-Origin" not in preflight(api_client, "/v1/bookings")
