import datetime
import decimal
import uuid

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer

from accounts.tests.factories import ApiKeyFactory
from core.renderers import ORJSONRenderer

pytestmark = pytest.mark.django_db

BODY = {
    "schedule": {
        "id": 12,
        "name": "Büro – Zürich 東京",
        "isDefault": True,
        "availability": [{"days": [1, 2], "startTime": "09:00:00", "date": None}],
        "createdAt": datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.UTC),
        "day": datetime.date(2026, 11, 20),
        "uid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "amount": decimal.Decimal("12.50"),
        "label": gettext_lazy("Not found"),
        "tags": ("a", "b"),
    }
}


def test_orjson_renderer_writes_what_drf_json_renderer_writes():
    ours = ORJSONRenderer().render(BODY)
    drf = JSONRenderer().render(BODY)

    assert ours == drf
    assert b'"createdAt":"2026-11-20T09:00:00Z"' in ours
    assert "Büro – Zürich 東京".encode() in ours


def test_orjson_renderer_renders_nothing_for_no_body():
    assert ORJSONRenderer().render(None) == b""


def test_api_responses_and_problems_are_rendered_as_json(api_client):
    api_key = ApiKeyFactory(user__name="Zoë")

    response = api_client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {api_key.raw_key}")
    missing = api_client.get("/v1/schedules/999999", HTTP_AUTHORIZATION=f"Bearer {api_key.raw_key}")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json()["user"]["name"] == "Zoë"
    assert missing.status_code == 404
    assert missing["Content-Type"] == "application/problem+json"
    assert missing.json()["code"] == "not_found"
