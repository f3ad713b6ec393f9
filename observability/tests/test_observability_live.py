"""Observability switched on from the environment, with real processes: gunicorn (2 workers,
config/gunicorn.conf.py) and a Celery worker with METRICS_ENABLED, LOG_FORMAT=json and
OTEL_TRACES_EXPORTER=console (spans written as JSON lines to their output), and a local webhook
receiver. One booking's trace goes from the web request (its span carries the request id) through
the Celery task's publish and run to the webhook's POST, whose span the subscriber receives as
`traceparent`; /metrics adds up both gunicorn
workers; the worker serves its own metrics; log lines are JSON with the request and trace ids."""

import json
import re
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import requests
from django.db import connection
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.tests.factories import EventTypeFactory
from tests.support.live_services import wait_until
from tests.support.outages import CeleryWorker, Gunicorn, free_port
from webhooks.models import WebhookTrigger
from webhooks.tests.factories import WebhookFactory

BERLIN = ZoneInfo("Europe/Berlin")
TIMEOUT = 10.0


def samples(text: str, name: str) -> dict[tuple, float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                found[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def json_records(log: str, key: str) -> list[dict]:
    """The JSON lines of a process's output that have `key`: spans (`span_id`), log lines (`level`)."""
    return [json.loads(line) for line in log.splitlines() if line.startswith("{") and f'"{key}"' in line]


def spans(log: str) -> list[dict]:
    return json_records(log, "span_id")


def json_lines(log: str) -> list[dict]:
    return json_records(log, "level")


@pytest.mark.django_db(transaction=True)
def test_metrics_traces_and_json_logs_across_web_worker_and_subscriber(receiver, settings):
    import redis

    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    organizer = UserFactory()
    event_type = EventTypeFactory(owner=organizer, length=30)
    WebhookFactory(user=organizer, subscriber_url=receiver.url(), event_triggers=[WebhookTrigger.BOOKING_CREATED])
    headers = {"Authorization": f"Bearer {ApiKeyFactory().raw_key}"}
    today = timezone.now().astimezone(BERLIN).date()
    monday = today + timedelta(days=(7 - today.weekday()) % 7 + 14)
    database = connection.settings_dict
    worker_port = free_port()
    env = {
        "DJANGO_SETTINGS_MODULE": "webhooks.tests.worker_settings",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "METRICS_ENABLED": "1",
        "METRICS_WORKER_PORT": str(worker_port),
        "LOG_FORMAT": "json",
        "OTEL_TRACES_EXPORTER": "console",
    }
    server, worker = Gunicorn(env), CeleryWorker({**env, "CONN_MAX_AGE": "0"})
    try:
        server.start()
        worker.start()
        start = datetime.combine(monday, time(9), tzinfo=BERLIN)
        booked = requests.post(
            f"{server.url}/v1/bookings",
            json={"eventTypeId": event_type.pk, "start": start.isoformat(), "name": "Ada", "email": "ada@example.org"}
            | {"timeZone": "UTC"},
            headers={**headers, "X-Request-Id": "observed-booking-1"},
            timeout=TIMEOUT,
        )
        assert booked.status_code == 200, booked.text
        for _ in range(6):
            assert requests.get(f"{server.url}/v1/me", headers=headers, timeout=TIMEOUT).status_code == 200
        missing = requests.get(f"{server.url}/v1/nothing-here", headers={"X-Request-Id": "observed-404"}, timeout=5)
        assert missing.status_code == 404

        # Web -> Celery -> subscriber: one trace, named by the request's span. The request's span
        # (with its request id) is the parent of the task's publish (web), the publish of the
        # task's run (worker), the run of the webhook's POST (worker), whose span the subscriber
        # receives as the parent in `traceparent`.
        (hook,) = receiver.wait_for(1, 60)
        traceparent = hook.headers.get("traceparent", "")
        parsed = re.fullmatch(r"00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}", traceparent)
        assert parsed, traceparent
        trace_id, sent_span_id = f"0x{parsed.group(1)}", f"0x{parsed.group(2)}"
        wait_until(
            lambda: any(
                span["attributes"].get("http.request_id") == "observed-booking-1" for span in spans(server.log())
            ),
            30,
            "the booking request's span",
        )
        (request_span,) = [
            s for s in spans(server.log()) if s["attributes"].get("http.request_id") == "observed-booking-1"
        ]
        assert request_span["context"]["trace_id"] == trace_id
        assert request_span["kind"] == "SpanKind.SERVER" and request_span["parent_id"] is None

        def one(log: str, name: str) -> dict:
            (found,) = [s for s in spans(log) if s["name"] == name and s["context"]["trace_id"] == trace_id]
            return found

        published = one(server.log(), "apply_async/webhooks.deliver")
        assert published["kind"] == "SpanKind.PRODUCER"
        assert published["parent_id"] == request_span["context"]["span_id"]
        wait_until(lambda: any(s["context"]["span_id"] == sent_span_id for s in spans(worker.log())), 30, "POST span")
        run = one(worker.log(), "run/webhooks.deliver")
        assert run["kind"] == "SpanKind.CONSUMER" and run["parent_id"] == published["context"]["span_id"]
        sent = one(worker.log(), "POST")
        assert sent["kind"] == "SpanKind.CLIENT" and sent["parent_id"] == run["context"]["span_id"]
        assert sent["context"]["span_id"] == sent_span_id
        assert sent["attributes"]["http.url"] == receiver.url()
        # The request's queries are its children, in the same trace.
        assert any(
            s["attributes"].get("db.system") == "postgresql" and s["parent_id"] == request_span["context"]["span_id"]
            for s in spans(server.log())
        )

        # JSON logs: the 404's warning carries its request id and its trace id.
        wait_until(lambda: any(line.get("requestId") == "observed-404" for line in json_lines(server.log())), 30, "log")
        (logged,) = [line for line in json_lines(server.log()) if line.get("requestId") == "observed-404"]
        assert logged["level"] == "WARNING" and logged["logger"] == "django.request"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", logged["time"])
        assert re.fullmatch(r"[0-9a-f]{32}", logged["traceId"])
        assert any(line["logger"].startswith("celery") for line in json_lines(worker.log()))  # workers too

        # /metrics: both gunicorn workers' requests, added up, whichever answers the scrape.
        for _ in range(3):
            scraped = requests.get(f"{server.url}/metrics", timeout=TIMEOUT).text
            counted = samples(scraped, "scheduling_http_requests_total")
            assert counted[(("method", "GET"), ("route", "v1/me"), ("status", "200"))] == 6
            assert counted.get((("method", "POST"), ("route", "v1/bookings"), ("status", "200"))) == 1, sorted(counted)
        histogram = samples(scraped, "scheduling_http_request_duration_seconds_count")
        assert histogram[(("method", "GET"), ("route", "v1/me"))] == 6
        assert samples(scraped, "scheduling_db_query_duration_seconds_count")[()] > 0
        assert samples(scraped, "scheduling_redis_command_duration_seconds_count")[()] > 0
        assert set(samples(scraped, "scheduling_webhook_outbox_depth")) == {()}

        # The worker's own metrics: the attempt, by outcome.
        def attempts():
            text = requests.get(f"http://127.0.0.1:{worker_port}/metrics", timeout=TIMEOUT).text
            return samples(text, "scheduling_webhook_attempts_total").get((("outcome", "succeeded"),), 0)

        wait_until(lambda: attempts() == 1, 30, "the worker to count the attempt")
    finally:
        worker.stop()
        server.stop()
