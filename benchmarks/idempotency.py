"""What an `Idempotency-Key` costs on `POST /v1/bookings`, measured in one process (no HTTP
server, no wrk): SQL statements and wall time per request, keyed and unkeyed alternately so
that a noisy machine slows both alike, plus a replay of a keyed request.

    createdb -h 127.0.0.1 -U postgres bench_idempotency
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_idempotency \\
        DJANGO_SETTINGS_MODULE=config.settings_test .venv/bin/python -m benchmarks.idempotency [rounds]

It migrates that database and adds a user, an API key, an event type and one webhook (so each
booking writes an outbox row, as in production); it never touches another database.
"""

import statistics
import sys
import time
import uuid
from datetime import datetime, timedelta
from datetime import time as clock
from zoneinfo import ZoneInfo

import django


def main(rounds: int) -> None:
    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone
    from rest_framework.test import APIClient

    from accounts.tests.factories import ApiKeyFactory, UserFactory
    from scheduling.tests.factories import EventTypeFactory
    from webhooks.tests.factories import WebhookFactory

    call_command("migrate", verbosity=0)
    organizer = UserFactory(username=f"bench-{uuid.uuid4().hex[:12]}", time_zone="Europe/Berlin")
    raw_key = ApiKeyFactory(user=organizer).raw_key
    event_type = EventTypeFactory(owner=organizer, length=30)
    WebhookFactory(user=organizer, event_triggers=["BOOKING_CREATED"])
    client = APIClient(HTTP_HOST="127.0.0.1")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    berlin = ZoneInfo("Europe/Berlin")

    def free_starts():
        day = timezone.now().astimezone(berlin).date() + timedelta(days=14)
        while True:
            if day.weekday() < 5:
                for hour in range(9, 17):
                    yield datetime.combine(day, clock(hour), tzinfo=berlin)
            day += timedelta(days=1)

    starts = free_starts()

    def body(start):
        return {
            "eventTypeId": event_type.pk,
            "start": start.isoformat(),
            "responses": {"name": "Grace Hopper", "email": "grace@example.org"},
            "timeZone": "Europe/London",
        }

    def post(data, **headers):
        with CaptureQueriesContext(connection) as queries:
            began = time.perf_counter()
            response = client.post("/v1/bookings", data, format="json", **headers)
            elapsed = time.perf_counter() - began
        assert response.status_code == 200, response.content
        return elapsed * 1000, len(queries), response

    for _ in range(5):  # warm up: connections, prepared statements, caches
        post(body(next(starts)))
        post(body(next(starts)), HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))

    results = {"unkeyed": [], "keyed": [], "replayed": []}
    queries = {}
    for _ in range(rounds):
        ms, count, _ = post(body(next(starts)))
        results["unkeyed"].append(ms)
        queries["unkeyed"] = count
        key = str(uuid.uuid4())
        data = body(next(starts))
        ms, count, _ = post(data, HTTP_IDEMPOTENCY_KEY=key)
        results["keyed"].append(ms)
        queries["keyed"] = count
        ms, count, response = post(data, HTTP_IDEMPOTENCY_KEY=key)
        assert response["Idempotent-Replayed"] == "true"
        results["replayed"].append(ms)
        queries["replayed"] = count

    base = statistics.median(results["unkeyed"])
    print(f"POST /v1/bookings, {rounds} rounds (in process, median and p90 ms; SQL statements per request)")
    for name, values in results.items():
        values = sorted(values)
        p90 = values[int(len(values) * 0.9) - 1]
        median = statistics.median(values)
        print(
            f"  {name:9} median {median:6.2f} ms  p90 {p90:6.2f} ms  {queries[name]:2d} statements"
            f"  ({(median / base - 1) * 100:+.1f} % time vs unkeyed)"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
