"""`make bench-teams`: what a team event type costs next to one host's, in one process (no HTTP
server, no wrk): SQL statements and wall time per request through Django's test client, the
requests of each round interleaved so that a noisy machine slows them alike.

    make bench-teams        # or, with a database of one's own whose name contains "bench":
    BENCH_TEAMS_DATABASE_URL=postgres://postgres@127.0.0.1:5432/sched_bench_teams \\
        DJANGO_SETTINGS_MODULE=config.settings_test .venv/bin/python -m benchmarks.teams [rounds]

It (re)creates that database, migrates it, seeds it with the test factories and analyses it:

- slots: ten people in ten zones (`benchmarks.slots.TEAM_ZONES`), each working Monday to Friday
  09:00-17:00 in their zone with 20 bookings of their own in the 31 days read; GET /v1/slots over
  those 31 days of a round-robin event type with all ten as hosts, against the same event type
  with one host (the first person) and against the first person's own event type. Target: ten
  hosts within 3x of one host.
- bookings: four people free around the clock; POST /v1/bookings of a round-robin event type with
  three of them as hosts and of a collective one with the same three, against a personal event
  type of the fourth, each booking at a start of its own. Target: a team booking within 1.3x of
  a personal one.
"""

import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from datetime import time as wall
from urllib.parse import urlsplit

import django

DATABASE_URL = os.environ.get("BENCH_TEAMS_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sched_bench_teams")
os.environ["DATABASE_URL"] = DATABASE_URL
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")


def _person(zone: str, rules: list[dict]):
    from accounts.tests.factories import UserFactory
    from scheduling.tests.factories import ScheduleFactory

    user = UserFactory(time_zone=zone)
    user.default_schedule = ScheduleFactory(user=user, time_zone=zone, availability=rules)
    user.save(update_fields=["default_schedule"])
    return user


def _team_event_type(team, kind: str, hosts: list):
    from scheduling.tests.factories import HostFactory, TeamEventTypeFactory

    event_type = TeamEventTypeFactory(team=team, scheduling_type=kind, minimum_booking_notice=0, length=30)
    for user in hosts:
        HostFactory(event_type=event_type, user=user)
    return event_type


def _personal_event_type(user):
    from scheduling.tests.factories import EventTypeFactory

    return EventTypeFactory(owner=user, schedule=user.default_schedule, minimum_booking_notice=0, length=30)


def seed(first_day: datetime) -> dict:
    from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory
    from benchmarks.slots import TEAM_ZONES
    from scheduling.models import Availability
    from scheduling.tests.factories import BookingFactory

    team = TeamFactory()
    office = [{"days_mask": Availability.mask_for([1, 2, 3, 4, 5]), "start_time": wall(9), "end_time": wall(17)}]
    slot_people = [_person(zone, office) for zone in TEAM_ZONES]
    for index, user in enumerate(slot_people):
        MembershipFactory(team=team, user=user)
        own = _personal_event_type(user)
        for number in range(20):
            # Spread over the 31 days at hours that fall in some host's working day.
            start = first_day + timedelta(days=number * 31 / 20, hours=(index + number) % 24)
            start = start.replace(minute=0, second=0, microsecond=0)
            BookingFactory(organizer=user, event_type=own, start_time=start, end_time=start + timedelta(minutes=30))
    around_the_clock = [{"days_mask": 127, "start_time": wall(0), "end_time": wall(23, 59)}]
    booking_people = [_person("UTC", around_the_clock) for _ in range(4)]
    for user in booking_people:
        MembershipFactory(team=team, user=user)
    return {
        "key": ApiKeyFactory(user=slot_people[0]).raw_key,
        "slots": {
            "one person's own event type": _personal_event_type(slot_people[0]).pk,
            "round robin, one host": _team_event_type(team, "ROUND_ROBIN", slot_people[:1]).pk,
            "round robin, 10 hosts": _team_event_type(team, "ROUND_ROBIN", slot_people).pk,
        },
        "bookings": {
            "personal": _personal_event_type(booking_people[0]).pk,
            "round robin, 3 hosts": _team_event_type(team, "ROUND_ROBIN", booking_people[1:]).pk,
            "collective, 3 hosts": _team_event_type(team, "COLLECTIVE", booking_people[1:]).pk,
        },
    }


def measure(client, request) -> tuple[float, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        began = time.perf_counter()
        response = request()
        elapsed = time.perf_counter() - began
    assert response.status_code == 200, response.content
    return elapsed * 1000, len(queries)


def interleaved(client, requests: dict, rounds: int) -> dict[str, tuple[float, int]]:
    """`{label: (median ms, statements)}`: each round runs every request once, in turn."""
    for request in requests.values():  # warm up: connections, compiled statements, caches
        for _ in range(3):
            measure(client, request)
    times = {label: [] for label in requests}
    statements = {}
    for _ in range(rounds):
        for label, request in requests.items():
            milliseconds, count = measure(client, request)
            times[label].append(milliseconds)
            statements[label] = count
    return {label: (statistics.median(times[label]), statements[label]) for label in requests}


def report(title: str, results: dict[str, tuple[float, int]], baseline: str) -> None:
    print(title)
    print(f"{'request':<40} {'median ms':>10} {'statements':>11} {'ratio':>7}")
    base = results[baseline][0]
    for label, (milliseconds, statements) in results.items():
        print(f"{label:<40} {milliseconds:10.2f} {statements:11d} {milliseconds / base:6.2f}x")
    print()


def main(rounds: int) -> None:
    from benchmarks.databases import recreate

    name = urlsplit(DATABASE_URL).path.lstrip("/")
    if "bench" not in name:
        raise SystemExit(f"Refusing to wipe {name!r}: a benchmark database's name contains 'bench'.")
    recreate(DATABASE_URL, [name])
    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from rest_framework.test import APIClient

    call_command("migrate", verbosity=0)
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    first_day = today + timedelta(days=7 - today.weekday() + 7)  # a Monday, a week or more ahead
    seeded = seed(first_day)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # the planner's statistics, as autovacuum keeps them in production
    client = APIClient(HTTP_HOST="127.0.0.1")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {seeded['key']}")

    window = {
        "startTime": first_day.isoformat().replace("+00:00", "Z"),
        "endTime": (first_day + timedelta(days=31)).isoformat().replace("+00:00", "Z"),
        "timeZone": "Europe/Berlin",
    }
    slots = {
        label: (lambda event_type_id=event_type_id: client.get("/v1/slots", {**window, "eventTypeId": event_type_id}))
        for label, event_type_id in seeded["slots"].items()
    }
    report(
        f"GET /v1/slots, 31 days (median of {rounds} interleaved rounds); target: 10 hosts within 3x of one host",
        interleaved(client, slots, rounds),
        "round robin, one host",
    )

    starts = iter(first_day + timedelta(days=60, minutes=30 * number) for number in range(100_000))

    def book(event_type_id: int):
        body = {
            "eventTypeId": event_type_id,
            "start": next(starts).isoformat().replace("+00:00", "Z"),
            "responses": {"name": "Grace Hopper", "email": "grace@example.org"},
            "timeZone": "Europe/London",
        }
        return client.post("/v1/bookings", body, format="json")

    bookings = {
        label: (lambda event_type_id=event_type_id: book(event_type_id))
        for label, event_type_id in seeded["bookings"].items()
    }
    report(
        f"POST /v1/bookings (median of {rounds} interleaved rounds); target: a team booking within 1.3x of a personal",
        interleaved(client, bookings, rounds),
        "personal",
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
