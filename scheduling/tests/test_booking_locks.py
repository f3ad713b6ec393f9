"""Every path that books a person takes the same lock per person, in user id order: a personal
booking (or a series) and a team booking that person attends beside its organizer, racing with
their own database connections, never both succeed; and bookings of two people in opposite
orders never deadlock."""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.db.models import Q

from core.exceptions import Conflict
from scheduling.models import Booking, BookingStatus
from scheduling.services.recurring import booking_series_create
from scheduling.tests.factories import EventTypeFactory, HostFactory, TeamEventTypeFactory
from scheduling.tests.test_team_bookings import MINUTE, book, host_user, next_monday

ROUNDS = 8


def personal_of(user, **fields):
    return EventTypeFactory(owner=user, schedule=user.default_schedule, minimum_booking_notice=0, length=30, **fields)


def team_with(kind: str):
    """A team event type of one hour whose bookings `attending` attends without organizing them:
    the second host of a collective one, or the fixed host of a round-robin one."""
    scheduling_type = "COLLECTIVE" if kind == "collective" else "ROUND_ROBIN"
    event_type = TeamEventTypeFactory(scheduling_type=scheduling_type, minimum_booking_notice=0, length=60)
    organizer = host_user(event_type)
    attending = host_user(event_type, is_fixed=kind == "fixed")
    return event_type, organizer, attending


def busy_bookings(user, start, end) -> int:
    """The active bookings `user` organizes or attends that overlap [start, end)."""
    return (
        Booking.objects.filter(Q(organizer=user) | Q(team_hosts__user=user))
        .filter(status__in=(BookingStatus.ACCEPTED, BookingStatus.PENDING), start_time__lt=end, end_time__gt=start)
        .distinct()
        .count()
    )


def status_of(action) -> int:
    """The answer a booking gets: 200, or 409 for a conflict (its own database connection)."""
    try:
        action()
        return 200
    except Conflict:
        return 409
    finally:
        connection.close()


def waits_on_a_lock(pending) -> bool:
    """Poll until some transaction waits for an advisory lock (True) or `pending` is done (False)."""
    for _ in range(600):
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
            if cursor.fetchone()[0]:
                return True
        if pending.done():
            return False
        threading.Event().wait(0.05)
    return False


def racing_requests(personal_kind: str, team_kind: str):
    """`at(start)`: the two racing requests for `start`, a booking of `attending`'s own event type
    at `start` + 30 minutes (one booking, or a series of two weekly occurrences whose first is that
    one) and a booking of the team event type at `start` (an hour), which `attending` attends."""
    team, _, attending = team_with(team_kind)
    recurring = {"freq": 2, "interval": 1, "count": 2} if personal_kind == "series" else None
    own = personal_of(attending, recurring_event=recurring)

    def at(start):
        def personal():
            if personal_kind == "series":
                booking_series_create(
                    event_type=own,
                    start=start + 30 * MINUTE,
                    count=2,
                    attendee_name="Own",
                    attendee_email="own@example.org",
                    attendee_time_zone="UTC",
                )
            else:
                book(own, start + 30 * MINUTE, 1)

        return {"personal": personal, "team": lambda: book(team, start, 2)}

    return at, attending


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("personal_kind", "team_kind"), [("single", "collective"), ("single", "fixed"), ("series", "collective")]
)
@pytest.mark.parametrize("first", ["personal", "team"])
def test_the_second_of_two_bookings_of_one_person_waits_for_the_first_and_answers_409(first, personal_kind, team_kind):
    """The first request's transaction stays open after it wrote its booking; the second must wait
    for it (a lock), then see its booking and answer 409."""
    start = next_monday() + timedelta(hours=10)
    at, attending = racing_requests(personal_kind, team_kind)
    requests = at(start)
    second = "team" if first == "personal" else "personal"
    written, release = threading.Event(), threading.Event()

    def first_request() -> int:
        try:
            with transaction.atomic():
                requests[first]()
                written.set()
                release.wait(timeout=60)
            return 200
        except Conflict:
            return 409
        finally:
            written.set()
            connection.close()

    def second_request() -> int:
        written.wait(timeout=60)
        return status_of(requests[second])

    with ThreadPoolExecutor(max_workers=2) as pool:
        first_status = pool.submit(first_request)
        second_status = pool.submit(second_request)
        waited = waits_on_a_lock(second_status)
        release.set()
        statuses = (first_status.result(), second_status.result())

    assert statuses == (200, 409)
    assert busy_bookings(attending, start, start + timedelta(hours=1)) == 1
    assert waited


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("team_kind", ["collective", "fixed"])
def test_a_personal_and_a_team_booking_of_one_person_let_go_together_give_one_booking(team_kind):
    """Many rounds, each with both requests let go at once from a barrier: whichever wins, the other
    answers 409 and the person has one booking at that time."""
    at, attending = racing_requests("single", team_kind)
    results = []
    for round_number in range(ROUNDS):
        start = next_monday() + timedelta(hours=1 + 2 * round_number)
        requests, barrier = at(start), threading.Barrier(2)

        def attempt(name: str, requests=requests, barrier=barrier) -> int:
            barrier.wait(timeout=60)
            return status_of(requests[name])

        with ThreadPoolExecutor(max_workers=2) as pool:
            statuses = sorted(pool.map(attempt, ["personal", "team"]))
        results.append((statuses, busy_bookings(attending, start, start + timedelta(hours=1))))

    assert results == [([200, 409], 1)] * ROUNDS


@pytest.mark.django_db(transaction=True)
def test_bookings_of_two_people_in_opposite_orders_never_deadlock():
    """Two collective event types of the same two people (their host rows written in opposite
    orders) and each person's own event type, all four booked at one time at once, many rounds:
    every request answers 200 or 409 (a deadlock would be an error), and each person ends with one
    booking then: a collective one, or their own."""
    one = TeamEventTypeFactory(scheduling_type="COLLECTIVE", minimum_booking_notice=0, length=30)
    first, second = host_user(one), host_user(one)
    other = TeamEventTypeFactory(scheduling_type="COLLECTIVE", minimum_booking_notice=0, length=30)
    HostFactory(event_type=other, user=second)
    HostFactory(event_type=other, user=first)
    own = {first: personal_of(first), second: personal_of(second)}
    results = []
    for round_number in range(ROUNDS):
        start = next_monday() + timedelta(hours=1 + round_number)
        requests = {
            "one": lambda start=start: book(one, start, 1),
            "other": lambda start=start: book(other, start, 2),
            "first": lambda start=start: book(own[first], start, 3),
            "second": lambda start=start: book(own[second], start, 4),
        }
        barrier = threading.Barrier(len(requests))

        def attempt(name: str, requests=requests, barrier=barrier) -> tuple[str, int]:
            barrier.wait(timeout=60)
            return name, status_of(requests[name])

        with ThreadPoolExecutor(max_workers=len(requests)) as pool:
            won = sorted(name for name, status in pool.map(attempt, requests) if status == 200)
        busy = [busy_bookings(person, start, start + 30 * MINUTE) for person in (first, second)]
        results.append((won in (["one"], ["other"], ["first", "second"]), busy))

    assert results == [(True, [1, 1])] * ROUNDS
