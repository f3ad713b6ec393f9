"""Redis away (stopped or frozen): the rate limit fails open, the API keeps answering, an operator
can see it (one warning per outage, counters in /readyz), and counting resumes on its own."""

import logging

import pytest

from core import ratelimit
from tests.support.credentials import auth

pytestmark = pytest.mark.django_db


def _events(caplog, name: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if getattr(record, "event", None) == name]


def test_redis_stopped_lets_requests_through_uncounted_and_warns_once(private_redis, api_client, caplog, settings):
    headers = auth()
    assert api_client.get("/v1/me", **headers)["RateLimit-Remaining"] == "599"
    private_redis.stop()

    with caplog.at_level(logging.WARNING, logger="core.ratelimit"):
        settings.RATE_LIMIT_RETRY_SECONDS = 0  # every request tries Redis again: still one warning
        responses = [api_client.get("/v1/me", **headers) for _ in range(5)]

    assert [response.status_code for response in responses] == [200] * 5
    assert all("RateLimit-Remaining" not in response for response in responses)
    assert all(response.json()["user"]["id"] for response in responses)
    assert len(_events(caplog, "rate_limit_unavailable")) == 1
    report = api_client.get("/readyz").json()["rateLimit"]
    assert report == {"status": "unavailable", "outages": 1, "uncountedRequests": 5}


def test_counting_resumes_when_redis_returns(private_redis, api_client, caplog, settings):
    settings.RATE_LIMIT_RETRY_SECONDS = 0  # the first request after the restart tries Redis
    headers = auth()
    private_redis.stop()
    assert "RateLimit-Limit" not in api_client.get("/v1/me", **headers)
    private_redis.start()

    with caplog.at_level(logging.WARNING, logger="core.ratelimit"):
        response = api_client.get("/v1/me", **headers)

    assert response.status_code == 200
    assert response["RateLimit-Remaining"] == "599"  # the restarted Redis starts from nothing
    assert len(_events(caplog, "rate_limit_recovered")) == 1
    assert "1 requests passed uncounted" in _events(caplog, "rate_limit_recovered")[0].getMessage()
    assert api_client.get("/readyz").json()["rateLimit"] == {"status": "ok", "outages": 1, "uncountedRequests": 1}


def test_a_frozen_redis_is_tried_once_per_retry_period_not_on_every_request(private_redis, api_client, caplog):
    headers = auth()
    api_client.get("/v1/me", **headers)
    private_redis.freeze()
    try:
        with caplog.at_level(logging.WARNING, logger="core.ratelimit"):
            responses = [api_client.get("/v1/me", **headers) for _ in range(4)]
    finally:
        private_redis.thaw()

    assert [response.status_code for response in responses] == [200] * 4
    assert all("RateLimit-Limit" not in response for response in responses)
    warnings = _events(caplog, "rate_limit_unavailable")
    assert len(warnings) == 1
    assert "Timeout" in warnings[0].getMessage()
    # Only the first request waited for Redis; the others did not try it (RATE_LIMIT_RETRY_SECONDS).
    assert ratelimit.health.should_try() is False
    assert ratelimit.health.report()["uncountedRequests"] == 4


def test_an_unknown_path_with_a_credential_is_still_a_404_while_redis_is_away(private_redis, api_client):
    headers = auth()
    private_redis.stop()

    response = api_client.get("/v1/no-such-resource", **headers)

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert "RateLimit-Limit" not in response
