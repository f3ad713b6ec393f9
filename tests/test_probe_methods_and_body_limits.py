"""Edges found by the outside-in audit: probe methods, oversized bodies."""

import json
import re

import pytest
from django.test import Client

from accounts.tests.factories import ApiKeyFactory
from scheduling.models import Schedule

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_probes_refuse_writes_with_a_problem_405_even_with_csrf_checks_on(path, method):
    client = Client(enforce_csrf_checks=True)

    response = getattr(client, method)(path)

    assert response.status_code == 405
    assert response["Content-Type"] == "application/problem+json"
    assert response["Allow"] == "GET, HEAD"
    assert response.json()["code"] == "method_not_allowed"
    assert response["X-Request-Id"]


def test_healthz_answers_get():
    assert Client().get("/healthz").json() == {"status": "ok"}


def test_a_body_over_the_upload_limit_is_a_413_and_writes_nothing(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    key = ApiKeyFactory().raw_key
    body = json.dumps({"name": "x" * 20_000, "timeZone": "UTC"})

    response = client.post("/v1/schedules", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")

    assert response.status_code == 413
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "payload_too_large"
    assert "10000 bytes (DATA_UPLOAD_MAX_MEMORY_SIZE)" in response.json()["detail"]
    assert not Schedule.objects.exists()


def test_docs_page_assets_are_served_by_the_app_itself_with_debug_off(client, settings):
    # pytest-django's live_server serves static files on its own; production (gunicorn) does not.
    # WhiteNoise makes the app serve them, so the offline docs page works under any WSGI server.
    settings.DEBUG = False
    page = client.get("/v1/docs").content.decode()
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page)

    assert assets
    for asset in assets:
        response = client.get(asset)
        assert response.status_code == 200, asset
        assert b"".join(response.streaming_content)


@pytest.mark.parametrize("accept", ["application/problem+json", "text/html", "application/xml", "*/*"])
def test_any_accept_header_gets_the_json_answer_not_a_406(client, accept):
    api_key = ApiKeyFactory()

    response = client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {api_key.raw_key}", HTTP_ACCEPT=accept)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["user"]["id"] == api_key.user_id
    assert response["RateLimit-Limit"]


def test_errors_stay_problem_json_whatever_the_accept_header(client):
    response = client.get("/v1/me", HTTP_ACCEPT="text/html")

    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"


def test_openapi_document_still_negotiates_yaml_and_json(client):
    assert client.get("/v1/openapi.yaml")["Content-Type"].startswith("application/vnd.oai.openapi")
    assert client.get("/v1/openapi.json")["Content-Type"].startswith("application/vnd.oai.openapi+json")


def test_resource_date_times_are_whole_seconds_in_utc_with_z(client):
    api_key = ApiKeyFactory()

    created = client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {api_key.raw_key}").json()["user"]["createdDate"]

    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", created)
