"""Observability in one process: off by default (no /metrics, no middleware), on from the settings;
/metrics only for private addresses; rate-limit refusals and the outbox read as metrics; a
request's queries and Redis commands counted once each, added up as it ends; JSON log lines with
the request id."""

import io
import json
import logging

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, Histogram
from prometheus_client.parser import text_string_to_metric_families

from observability import metrics
from observability.logs import JsonFormatter
from tests.support.credentials import auth
from webhooks.models import DeliveryStatus
from webhooks.tests.factories import WebhookDeliveryFactory

pytestmark = pytest.mark.django_db

MIDDLEWARE = "observability.middleware.ObservabilityMiddleware"


def value(text: str, name: str, **labels) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_ENABLED = True
    middleware = list(django_settings.MIDDLEWARE)
    if MIDDLEWARE not in middleware:
        middleware.insert(middleware.index("core.middleware.RequestIdMiddleware") + 1, MIDDLEWARE)
    settings.MIDDLEWARE = middleware
    metrics.install()


def test_off_by_default_there_is_no_metrics_page_and_no_middleware(client):
    assert django_settings.METRICS_ENABLED is False
    assert MIDDLEWARE not in django_settings.MIDDLEWARE
    response = client.get("/metrics")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_metrics_are_refused_to_a_public_address(metrics_on):
    assert Client(REMOTE_ADDR="203.0.113.9").get("/metrics").status_code == 403
    assert Client(REMOTE_ADDR="10.4.0.2").get("/metrics").status_code == 200


def test_requests_and_rate_limit_refusals_are_counted_by_route(metrics_on, settings, api_client):
    settings.RATE_LIMIT_PER_MINUTE = 1
    headers = auth()
    before = Client().get("/metrics").content.decode()

    answers = [api_client.get("/v1/me", **headers).status_code for _ in range(3)]
    after = Client().get("/metrics").content.decode()

    assert answers == [200, 429, 429]
    labels = {"method": "GET", "route": "v1/me"}
    assert (
        value(after, "scheduling_http_requests_total", **labels, status="429")
        - value(before, "scheduling_http_requests_total", **labels, status="429")
        == 2
    )
    assert (
        value(after, "scheduling_rate_limit_refusals_total", route="v1/me")
        - value(before, "scheduling_rate_limit_refusals_total", route="v1/me")
        == 2
    )
    assert value(after, "scheduling_db_query_duration_seconds_count") > value(
        before, "scheduling_db_query_duration_seconds_count"
    )


def test_a_request_adds_each_of_its_queries_and_redis_commands_to_the_histograms_once(metrics_on, api_client):
    def count(name):
        return REGISTRY.get_sample_value(f"{name}_count") or 0.0

    headers = auth()
    before = {
        name: count(name)
        for name in ("scheduling_db_query_duration_seconds", "scheduling_redis_command_duration_seconds")
    }
    with CaptureQueriesContext(connection) as queries:
        assert api_client.get("/v1/me", **headers).status_code == 200

    assert count("scheduling_db_query_duration_seconds") - before["scheduling_db_query_duration_seconds"] == len(
        queries
    )
    assert len(queries) > 0
    # The rate limit's count, in Redis.
    assert count("scheduling_redis_command_duration_seconds") > before["scheduling_redis_command_duration_seconds"]
    assert metrics.current.get() is None


def test_a_tally_flushed_reads_as_one_observe_per_value():
    registry = CollectorRegistry()
    folded = Histogram("folded_seconds", "", buckets=metrics.QUERY_BUCKETS, registry=registry)
    observed = Histogram("observed_seconds", "", buckets=metrics.QUERY_BUCKETS, registry=registry)
    tally = metrics.Tally(folded)
    for seconds in (0.0, 0.0004, 0.0005, 0.00051, 0.0031, 0.01, 0.7, 2.0, 0.0005):
        tally.add(seconds)
        observed.observe(seconds)
    tally.flush()
    tally.flush()  # nothing more to add
    tally.add(0.02)
    observed.observe(0.02)
    tally.flush()

    def read(name):
        return {
            (sample.name.removeprefix(name), tuple(sorted(sample.labels.items()))): sample.value
            for family in registry.collect()
            if family.name == name
            for sample in family.samples
            if not sample.name.endswith("_created")
        }

    assert read("folded_seconds") == read("observed_seconds")
    assert read("folded_seconds")[("_count", ())] == 10


def test_the_outbox_depth_and_the_oldest_due_delivery_are_read_at_each_scrape(metrics_on):
    past = timezone.now() - timezone.timedelta(minutes=10)
    WebhookDeliveryFactory.create_batch(3, status=DeliveryStatus.PENDING, next_attempt_at=past)
    WebhookDeliveryFactory(status=DeliveryStatus.SUCCEEDED)

    text = Client().get("/metrics").content.decode()

    assert value(text, "scheduling_webhook_outbox_depth") == 3
    assert 600 <= value(text, "scheduling_webhook_oldest_due_seconds") < 3600


def test_json_log_lines_carry_time_level_logger_and_the_request_id(metrics_on):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        Client().get("/v1/not-a-thing", HTTP_X_REQUEST_ID="json-log-test-1")
    finally:
        logger.removeHandler(handler)

    (line,) = [json.loads(text) for text in stream.getvalue().splitlines()]
    assert line["level"] == "WARNING" and line["logger"] == "django.request"
    assert line["requestId"] == "json-log-test-1"
    assert line["message"] == "Not Found: /v1/not-a-thing"
    assert line["time"].endswith("Z") and line["traceId"] == ""
