"""Edges found by the outside-in audit: probe methods, oversized bodies."""

import json

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


def test_a_body_over_the_upload_limit_is_a_400_and_writes_nothing(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    key = ApiKeyFactory().raw_key
    body = json.dumps({"name": "x" * 20_000, "timeZone": "UTC"})

    response = client.post("/v1/schedules", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "malformed_request"
    assert "too large" in response.json()["detail"]
    assert not Schedule.objects.exists()
