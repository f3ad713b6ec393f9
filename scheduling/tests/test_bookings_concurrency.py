"""No double booking under real concurrency: parallel HTTP requests against a live server on
PostgreSQL, where the exclusion constraint has the last word."""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import requests
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import Booking, BookingStatus
from scheduling.tests.factories import BookingFactory, EventTypeFactory

BERLIN = ZoneInfo("Europe/Berlin")
PARALLEL = 20


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


@pytest.mark.django_db(transaction=True)
def test_twenty_parallel_requests_for_one_slot_give_exactly_one_booking(live_server):
    organizer = UserFactory()
    event_type = EventTypeFactory(owner=organizer, length=30)
    keys = [ApiKeyFactory().raw_key for _ in range(PARALLEL)]
    start = datetime.combine(monday_ahead(), time(10), tzinfo=BERLIN).isoformat()
    barrier = threading.Barrier(PARALLEL)

    def book(index: int) -> int:
        body = {
            "eventTypeId": event_type.pk,
            "start": start,
            "name": f"Attendee {index}",
            "email": f"attendee{index}@example.org",
            "timeZone": "UTC",
        }
        barrier.wait(timeout=30)
        response = requests.post(
            f"{live_server.url}/v1/bookings", json=body, headers={"Authorization": f"Bearer {keys[index]}"}, timeout=60
        )
        return response.status_code

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        statuses = list(pool.map(book, range(PARALLEL)))

    assert sorted(statuses) == [200] + [409] * (PARALLEL - 1)
    assert Booking.objects.filter(organizer=organizer).count() == 1


@pytest.mark.django_db(transaction=True)
def test_overlapping_requests_of_different_event_types_of_one_organizer_give_one_booking(live_server):
    organizer = UserFactory()
    short = EventTypeFactory(owner=organizer, length=30)
    long = EventTypeFactory(owner=organizer, length=60)
    raw_key = ApiKeyFactory(user=organizer).raw_key
    day = monday_ahead()
    bodies = [
        {"eventTypeId": short.pk, "start": datetime.combine(day, time(10, 30), tzinfo=BERLIN).isoformat()},
        {"eventTypeId": long.pk, "start": datetime.combine(day, time(10), tzinfo=BERLIN).isoformat()},
    ] * 5
    barrier = threading.Barrier(len(bodies))

    def book(body: dict) -> int:
        body = {**body, "name": "A", "email": "a@example.org", "timeZone": "UTC"}
        barrier.wait(timeout=30)
        return requests.post(
            f"{live_server.url}/v1/bookings", json=body, headers={"Authorization": f"Bearer {raw_key}"}, timeout=60
        ).status_code

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        statuses = list(pool.map(book, bodies))

    assert statuses.count(200) == 1
    assert statuses.count(409) == len(bodies) - 1
    assert Booking.objects.filter(organizer=organizer).count() == 1


@pytest.mark.django_db
def test_database_refuses_overlapping_active_bookings_of_one_organizer():
    assert connection.vendor == "postgresql"
    booking = BookingFactory()
    with pytest.raises(IntegrityError, match="booking_no_overlap_per_organizer"), transaction.atomic():
        BookingFactory(
            organizer=booking.organizer,
            event_type=booking.event_type,
            start_time=booking.start_time + timedelta(minutes=15),
            end_time=booking.end_time + timedelta(minutes=15),
        )
    assert Booking.objects.count() == 1


@pytest.mark.django_db
def test_database_allows_overlap_with_cancelled_bookings_and_other_organizers_and_touching_ends():
    booking = BookingFactory()
    BookingFactory(
        organizer=booking.organizer,
        start_time=booking.start_time,
        end_time=booking.end_time,
        status=BookingStatus.CANCELLED,
    )
    BookingFactory(start_time=booking.start_time, end_time=booking.end_time)
    BookingFactory(organizer=booking.organizer, start_time=booking.end_time, end_time=booking.end_time + timedelta(1))
    assert Booking.objects.count() == 4
