"""Outages with real processes: gunicorn (config/gunicorn.conf.py), a Celery worker with its beat,
a private Redis and a throwaway PostgreSQL that the tests stop, freeze and restart, and a local
webhook receiver. The machine's shared servers are never stopped.

HTTP calls carry a client timeout: a request that does not answer within it fails the test as a
hang would, whatever the machine's load otherwise does to response times."""

import json
import re
import subprocess
import sys
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import requests
from django.db import connection
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import Booking
from scheduling.tests.factories import EventTypeFactory
from tests.support.live_services import Receiver, wait_until
from tests.support.outages import ROOT, CeleryWorker, Gunicorn, PrivatePostgres, PrivateRedis
from tests.support.strict_http import exchange
from webhooks.models import WebhookTrigger
from webhooks.tests.factories import WebhookFactory

BERLIN = ZoneInfo("Europe/Berlin")
ANSWER_WITHIN = 3.0  # seconds: the client's patience, far above the ~0.25 s a Redis outage may cost
FAST_SWEEPS = {"LEASE_SECONDS": 2, "SWEEP_INTERVAL_SECONDS": 0.5, "TIMEOUT_SECONDS": 5.0}


def monday_ahead(weeks: int = 3) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def live_database_url() -> str:
    database = connection.settings_dict
    return f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.mark.django_db(transaction=True)
def test_redis_stopped_and_frozen_during_booking_creates_loses_no_webhook(receiver):
    organizer = UserFactory()
    event_type = EventTypeFactory(owner=organizer, length=30)
    WebhookFactory(user=organizer, subscriber_url=receiver.url(), event_triggers=[WebhookTrigger.BOOKING_CREATED])
    headers = {"Authorization": f"Bearer {ApiKeyFactory().raw_key}"}
    slots = iter(
        datetime.combine(monday_ahead(), time(9), tzinfo=BERLIN) + timedelta(minutes=30 * i) for i in range(16)
    )

    def book():
        body = {
            "eventTypeId": event_type.pk,
            "start": next(slots).isoformat(),
            "name": "Ada",
            "email": "ada@example.org",
            "timeZone": "UTC",
        }
        return requests.post(f"{server.url}/v1/bookings", json=body, headers=headers, timeout=ANSWER_WITHIN)

    with PrivateRedis() as redis_server:
        env = {
            "DJANGO_SETTINGS_MODULE": "webhooks.tests.worker_settings",
            "WEBHOOKS_TEST_OVERRIDES": json.dumps(FAST_SWEEPS),
            "DATABASE_URL": live_database_url(),
            "REDIS_URL": redis_server.url,
            "CELERY_BROKER_URL": redis_server.url,
        }
        server, worker = Gunicorn(env), CeleryWorker({**env, "CONN_MAX_AGE": "0"})
        try:
            server.start()
            worker.start()
            responses = [book() for _ in range(3)]
            assert [response.status_code for response in responses] == [200] * 3, responses[0].text
            assert all(response.headers["RateLimit-Limit"] == "600" for response in responses)

            redis_server.stop()  # everything it held is gone, queued messages included
            down = [book() for _ in range(5)]

            redis_server.start()
            redis_server.freeze()
            try:
                frozen = [book() for _ in range(4)]
            finally:
                redis_server.thaw()
            back = [book() for _ in range(2)]

            for response in down + frozen:
                assert response.status_code == 200, response.text
                assert "RateLimit-Limit" not in response.headers  # not counted while Redis is away
            assert [response.status_code for response in back] == [200, 200]
            created = {response.json()["uid"] for response in responses + down + frozen + back}
            assert len(created) == 14 == Booking.objects.filter(event_type=event_type).count()

            def delivered_uids():
                return {request.json()["payload"]["uid"] for request in receiver.requests}

            try:
                wait_until(lambda: delivered_uids() >= created, 45, "every booking's BOOKING_CREATED webhook")
            except AssertionError as error:
                missing = len(created - delivered_uids())
                said = worker.log()[-6000:]
                raise AssertionError(f"{error}: {missing} missing, {worker.restarts} restarts:\n{said}") from None
            assert delivered_uids() == created
            assert "rate_limit_unavailable" in server.log()
            assert "Could not enqueue webhook deliveries" in server.log()  # the sweeper sent those
        finally:
            worker.stop()
            server.stop()


def _create_api_key(database_url: str) -> str:
    script = (
        "import django; django.setup()\n"
        "from accounts.models import User\n"
        "from accounts.services import api_key_create\n"
        "user = User.objects.create_user(username='reader', email='reader@example.org', password='x' * 20)\n"
        "print(api_key_create(user=user)[1])\n"
    )
    env = {"DJANGO_SETTINGS_MODULE": "config.settings_test", "DATABASE_URL": database_url}
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env={**_environ(), **env}, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip().splitlines()[-1]


def _environ() -> dict:
    import os

    return dict(os.environ)


def test_postgres_restart_during_reads_gives_503s_then_recovers_without_a_restart():
    with PrivatePostgres() as postgres, PrivateRedis() as redis_server:
        env = {"DJANGO_SETTINGS_MODULE": "config.settings_test", "DATABASE_URL": postgres.url}
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=ROOT,
            env={**_environ(), **env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert migrate.returncode == 0, migrate.stderr
        headers = {"Authorization": f"Bearer {_create_api_key(postgres.url)}"}
        server = Gunicorn({**env, "REDIS_URL": redis_server.url})
        try:
            server.start()

            def read():
                return requests.get(f"{server.url}/v1/me", headers=headers, timeout=ANSWER_WITHIN)

            assert [read().status_code for _ in range(4)] == [200] * 4  # both workers hold a connection

            postgres.stop()
            failures = [read() for _ in range(4)]
            session = requests.Session()
            page = session.get(f"{server.url}/auth/login", timeout=ANSWER_WITHIN)
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
            sign_in = session.post(
                f"{server.url}/auth/login",
                data={"username": "reader", "password": "x" * 20, "csrfmiddlewaretoken": token},
                headers={"Referer": f"{server.url}/auth/login"},
                timeout=ANSWER_WITHIN,
            )
            ready = requests.get(f"{server.url}/readyz", timeout=ANSWER_WITHIN)

            for response in [*failures, sign_in]:
                assert response.status_code == 503, response.text
                assert response.headers["Content-Type"] == "application/problem+json"
                assert response.headers["Retry-After"] == "5"
                body = response.json()
                assert body["code"] == "service_unavailable"
                assert "Traceback" not in response.text and "psycopg" not in response.text
            assert ready.status_code == 503
            assert ready.json()["checks"]["database"].startswith("unreachable")

            postgres.start()
            wait_until(lambda: read().status_code == 200, 15, "a read to succeed after PostgreSQL came back")
            assert [read().status_code for _ in range(4)] == [200] * 4
            assert requests.get(f"{server.url}/readyz", timeout=ANSWER_WITHIN).status_code == 200
        finally:
            server.stop()


@pytest.mark.django_db(transaction=True)
def test_what_gunicorn_and_django_refuse_before_any_view_is_problem_json():
    server = Gunicorn(
        {"DJANGO_SETTINGS_MODULE": "config.settings_test", "DATABASE_URL": live_database_url()}, workers=1
    )
    try:
        server.start()
        long_line = b"GET /v1/me?" + b"a" * 5000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        many_headers = b"GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(
            b"X-Header-%d: x\r\n" % index for index in range(101)
        )
        huge_header = b"GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n"
        bad_host = b"GET /v1/me HTTP/1.0\r\nHost: attacker.example\r\n\r\n"
        expected = [
            (long_line, 414, "uri_too_long"),
            (many_headers + b"\r\n", 431, "request_header_fields_too_large"),
            (huge_header, 431, "request_header_fields_too_large"),
            (b"NOT A REQUEST\r\n\r\n", 400, "malformed_request"),
            (bad_host, 400, "malformed_request"),
        ]
        for request, status, code in expected:
            answer = exchange(server.url, request)
            assert (answer.status, answer.headers["content-type"]) == (status, "application/problem+json"), answer.body
            problem = answer.json()
            assert (problem["status"], problem["code"]) == (status, code)
            assert problem["detail"] == problem["message"]
            assert problem["requestId"] == answer.headers["x-request-id"]
    finally:
        server.stop()
