"""`/readyz` tells "this instance can serve" (the database answers: 200) apart from "a dependency
is degraded" (Redis down: still 200, said in the body). Without the database it is a 503
(tests/test_outages_live.py stops a real PostgreSQL under gunicorn for that)."""

import pytest
from celery import current_app

pytestmark = pytest.mark.django_db


@pytest.fixture
def private_broker(private_redis, monkeypatch):
    """The private Redis as the broker too, so that stopping it is a whole Redis outage."""
    monkeypatch.setitem(current_app.conf, "broker_url", private_redis.url)
    monkeypatch.setitem(current_app.conf, "broker_write_url", private_redis.url)
    return private_redis


def test_ready_with_every_dependency_up(private_broker, api_client):
    response = api_client.get("/readyz")

    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["checks"] == {"database": "ok", "broker": "ok"}


def test_redis_down_is_degraded_but_still_ready(private_broker, api_client, settings):
    from tests.support.credentials import auth

    settings.RATE_LIMIT_RETRY_SECONDS = 0
    private_broker.stop()
    assert api_client.get("/v1/me", **auth()).status_code == 200  # the API keeps serving

    response = api_client.get("/readyz")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"].startswith("unreachable")
    assert body["rateLimit"]["status"] == "unavailable"

    private_broker.start()
    api_client.get("/v1/me", **auth())  # the limiter notices Redis is back
    assert api_client.get("/readyz").json()["status"] == "ok"
