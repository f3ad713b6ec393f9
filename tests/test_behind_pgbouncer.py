"""The API served through a transaction-mode connection pooler (Debian's PgBouncer), configured as the
README's "Configuration" says for one without prepared-statement support: statements never prepared
(`DB_PREPARE_THRESHOLD=-1`) and no startup options (`DB_SESSION_JIT_OFF=false`).

The pooler has one server connection for the two gunicorn workers, so each transaction of a worker
may run on the connection the other worker used a moment before. What must stay whole across that:
statements sent together in one round trip (a write's answer is read back in a psycopg pipeline),
a list's page and COUNT from statements kept per process, a write with an `Idempotency-Key` and its
replay, the owner's lock of a schedule write."""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import requests
from django.db import connection
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import Booking, Schedule
from scheduling.tests.factories import EventTypeFactory
from tests.support.outages import Gunicorn, PrivatePgBouncer

BERLIN = ZoneInfo("Europe/Berlin")
CLIENTS, ROUNDS = 4, 3


def _monday_slots() -> list[datetime]:
    """The half hours of a Monday three weeks ahead, 09:00-17:00 in Berlin (the factory's schedule)."""
    today = timezone.now().astimezone(BERLIN).date()
    monday = today + timedelta(days=(7 - today.weekday()) % 7 + 21)
    return [datetime.combine(monday, time(9), tzinfo=BERLIN) + timedelta(minutes=30 * i) for i in range(16)]


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_whole_through_a_transaction_mode_pooler():
    owner = UserFactory()
    event_type = EventTypeFactory(owner=owner, length=30)
    headers = {"Authorization": f"Bearer {ApiKeyFactory(user=owner).raw_key}"}
    schedules_before = set(Schedule.objects.filter(user=owner).values_list("id", flat=True))  # the event type's
    slots = iter(_monday_slots())
    taking = threading.Lock()
    database = connection.settings_dict

    with PrivatePgBouncer(int(database["PORT"] or 5432), pool_size=1) as pooler:
        env = {
            "DJANGO_SETTINGS_MODULE": "config.settings_test",
            "DATABASE_URL": pooler.url(database["NAME"]),
            "DB_PREPARE_THRESHOLD": "-1",
            "DB_SESSION_JIT_OFF": "false",
            "CONN_MAX_AGE": "60",
        }
        server = Gunicorn(env)
        try:
            server.start()

            def call(method: str, path: str, *, key: str | None = None, **kwargs) -> dict:
                sent = {**headers, "Idempotency-Key": key} if key else headers
                response = requests.request(method, f"{server.url}{path}", headers=sent, timeout=30, **kwargs)
                assert response.status_code == 200, (method, path, response.status_code, response.text[:500])
                return response.json()

            def client(number: int) -> list[tuple[int, str]]:
                made = []
                for round_ in range(ROUNDS):
                    name = f"Client {number} round {round_}"
                    created = call("POST", "/v1/schedules", json={"name": name, "timeZone": "Europe/Berlin"})
                    schedule = created["schedule"]
                    assert schedule["name"] == name and len(schedule["availability"]) == 1
                    assert call("GET", f"/v1/schedules/{schedule['id']}")["schedule"] == schedule
                    with taking:
                        start = next(slots)
                    body = {
                        "eventTypeId": event_type.pk,
                        "start": start.isoformat(),
                        "name": name,
                        "email": f"client{number}@example.org",
                        "timeZone": "Europe/Berlin",
                    }
                    key = f"pooler-{number}-{round_}"
                    booked = call("POST", "/v1/bookings", json=body, key=key)
                    replayed = call("POST", "/v1/bookings", json=body, key=key)
                    assert replayed["uid"] == booked["uid"]
                    listed = call("GET", "/v1/bookings?take=100")["bookings"]
                    assert booked["id"] in {booking["id"] for booking in listed}
                    assert call("GET", "/v1/me")["user"]["id"] == owner.pk
                    made.append((schedule["id"], booked["uid"]))
                return made

            with ThreadPoolExecutor(CLIENTS) as pool:
                made = [item for items in pool.map(client, range(CLIENTS)) for item in items]
        finally:
            server.stop()
        assert f"db={database['NAME']}" in pooler.log()  # the service's connections went through it

    schedules = {schedule_id for schedule_id, _ in made}
    assert schedules == set(Schedule.objects.filter(user=owner).values_list("id", flat=True)) - schedules_before
    assert {uid for _, uid in made} == set(Booking.objects.filter(event_type=event_type).values_list("uid", flat=True))
    assert len(made) == CLIENTS * ROUNDS
    owner.refresh_from_db()
    assert owner.default_schedule_id in schedules | schedules_before
