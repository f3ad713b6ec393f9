"""Errors and headers that every resource endpoint shares (docs/api.md, Error codes), on the real URLs."""

import pytest
from django.core.cache import cache

from accounts.tests.factories import ApiKeyFactory
from scheduling.models import Schedule
from tests.support.credentials import auth

pytestmark = pytest.mark.django_db


@pytest.fixture
def headers():
    return auth()


@pytest.mark.parametrize("path", ["/v1/no-such-resource", "/no-such-resource", "/v1/schedules/12/no-such-action"])
def test_unknown_paths_are_problem_404(api_client, headers, path):
    response = api_client.get(path, **headers)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "not_found"


@pytest.mark.parametrize("path", ["/v1/no-such-resource", "/v1/schedules/12/no-such-action"])
def test_unknown_paths_spend_the_credentials_rate_limit_budget(api_client, settings, path):
    cache.clear()
    settings.RATE_LIMIT_PER_MINUTE = 2
    key = ApiKeyFactory()
    first = api_client.get(path, HTTP_AUTHORIZATION=f"Bearer {key.raw_key}")
    second = api_client.get(f"{path}?apiKey={key.raw_key}")
    refused = api_client.get(path, HTTP_AUTHORIZATION=f"Bearer {key.raw_key}")
    assert [first.status_code, second.status_code, refused.status_code] == [404, 404, 429]
    assert [first["RateLimit-Remaining"], second["RateLimit-Remaining"]] == ["1", "0"]
    assert first["RateLimit-Limit"] == "2"
    assert refused.json()["code"] == "rate_limited"
    assert refused["Content-Type"] == "application/problem+json"
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused["RateLimit-Remaining"] == "0"


@pytest.mark.parametrize(
    "header", [None, "Bearer sk_live_not_a_real_key", "Bearer not-a-real-token", "Basic dXNlcjpwYXNz"]
)
def test_unknown_paths_without_a_valid_credential_are_a_plain_404(api_client, header):
    cache.clear()
    response = api_client.get("/v1/no-such-resource", **({"HTTP_AUTHORIZATION": header} if header else {}))
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert "RateLimit-Remaining" not in response
    assert "WWW-Authenticate" not in response


def test_json_that_does_not_parse_is_malformed_request(api_client, headers):
    response = api_client.generic("POST", "/v1/schedules", '{"name": ', content_type="application/json", **headers)
    assert response.status_code == 400
    assert response.json()["code"] == "malformed_request"
    assert not Schedule.objects.exists()


def test_other_content_types_are_415(api_client, headers):
    response = api_client.generic("POST", "/v1/schedules", "name=x&timeZone=UTC", content_type="text/plain", **headers)
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"
    assert not Schedule.objects.exists()


def test_a_body_that_is_not_an_object_is_a_validation_error(api_client, headers):
    response = api_client.post("/v1/schedules", [1, 2], format="json", **headers)
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_every_authenticated_response_has_rate_limit_and_request_id_headers(api_client, headers):
    response = api_client.get("/v1/schedules", HTTP_X_REQUEST_ID="trace-123", **headers)
    assert response["X-Request-Id"] == "trace-123"
    assert int(response["RateLimit-Limit"]) == 600
    assert 0 <= int(response["RateLimit-Remaining"]) < 600
    assert 1 <= int(response["RateLimit-Reset"]) <= 60
    response = api_client.get("/v1/schedules/999999", **headers)
    assert response.status_code == 404
    assert "RateLimit-Remaining" in response
