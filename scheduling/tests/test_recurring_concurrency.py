"""Recurring series under real concurrency, and their webhook events delivered for real: parallel
HTTP requests against a live server on PostgreSQL, a Celery worker and a local receiver."""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import requests
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import Booking, BookingStatus
from scheduling.tests.factories import EventTypeFactory
from webhooks.models import WebhookTrigger
from webhooks.tests.factories import WebhookFactory

BERLIN = ZoneInfo("Europe/Berlin")
PARALLEL = 20
COUNT = 4


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


@pytest.mark.django_db(transaction=True)
def test_twenty_parallel_overlapping_series_never_double_book_and_each_is_all_or_nothing(live_server):
    organizer = UserFactory()
    event_type = EventTypeFactory(owner=organizer, length=60, recurring_event={"freq": 2, "interval": 1, "count": 10})
    keys = [ApiKeyFactory().raw_key for _ in range(PARALLEL)]
    # Series i starts in week i % 5 at 10:00 or 10:30 (i // 5 % 2): every pair that shares a week and
    # whose hours overlap collides there, so at most a few of the twenty can all be booked.
    starts = [
        datetime.combine(monday_ahead() + timedelta(weeks=index % 5), time(10, 30 * (index // 5 % 2)), tzinfo=BERLIN)
        for index in range(PARALLEL)
    ]
    barrier = threading.Barrier(PARALLEL)

    def book(index: int) -> tuple[int, dict]:
        body = {
            "eventTypeId": event_type.pk,
            "start": starts[index].isoformat(),
            "name": f"Attendee {index}",
            "email": f"attendee{index}@example.org",
            "timeZone": "UTC",
            "recurringCount": COUNT,
        }
        barrier.wait(timeout=30)
        response = requests.post(
            f"{live_server.url}/v1/bookings", json=body, headers={"Authorization": f"Bearer {keys[index]}"}, timeout=120
        )
        return response.status_code, response.json()

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        answers = list(pool.map(book, range(PARALLEL)))

    assert {status for status, _ in answers} <= {200, 409}
    booked = [body["recurringEventId"] for status, body in answers if status == 200]
    assert booked, "some series must get through"
    refused = [body for status, body in answers if status == 409]
    assert all(body["errors"] and all(key.startswith("occurrences[") for key in body["errors"]) for body in refused)
    bookings = list(Booking.objects.filter(organizer=organizer).order_by("start_time"))
    # All or nothing: every answered series has its four occurrences, and nothing else exists.
    assert len(bookings) == COUNT * len(booked)
    assert sorted({booking.recurring_event_id for booking in bookings}) == sorted(booked)
    for series_id in booked:
        assert sum(booking.recurring_event_id == series_id for booking in bookings) == COUNT
    # No double booking: no two active bookings of the organiser overlap.
    active = [booking for booking in bookings if booking.status in (BookingStatus.ACCEPTED, BookingStatus.PENDING)]
    for earlier, later in zip(active, active[1:], strict=False):
        assert earlier.end_time <= later.start_time


@pytest.mark.django_db(transaction=True)
def test_series_events_reach_the_subscriber_one_per_occurrence_and_one_for_cancelling_the_rest(
    live_server,
    receiver,  # noqa: F811 - the fixture imported above
    start_worker,  # noqa: F811
):
    start_worker()
    organizer = UserFactory()
    raw_key = ApiKeyFactory(user=organizer).raw_key
    event_type = EventTypeFactory(owner=organizer, length=30, recurring_event={"freq": 2, "interval": 1, "count": 6})
    WebhookFactory(
        user=organizer,
        subscriber_url=receiver.url(),
        event_triggers=[WebhookTrigger.BOOKING_CREATED, WebhookTrigger.BOOKING_CANCELLED],
    )
    headers = {"Authorization": f"Bearer {raw_key}"}
    first = datetime.combine(monday_ahead(), time(11), tzinfo=BERLIN)
    body = {
        "eventTypeId": event_type.pk,
        "start": first.isoformat(),
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "timeZone": "America/New_York",
        "recurringCount": 3,
    }
    created = requests.post(f"{live_server.url}/v1/bookings", json=body, headers=headers, timeout=60)
    assert created.status_code == 200, created.json()
    received = receiver.wait_for(3)
    payloads = sorted((request.json()["payload"] for request in received), key=lambda payload: payload["startTime"])
    assert {request.json()["triggerEvent"] for request in received} == {"BOOKING_CREATED"}
    assert [payload["startTime"] for payload in payloads] == [
        (first + timedelta(weeks=week)).astimezone(ZoneInfo("UTC")).strftime("%Y-%m-%dT%H:%M:%SZ") for week in range(3)
    ]
    assert all(payload["recurringEvent"] == {"freq": 2, "count": 3, "interval": 1} for payload in payloads)
    cancelled = requests.delete(
        f"{live_server.url}/v1/bookings/{created.json()['id']}?allRemainingBookings=true", headers=headers, timeout=60
    )
    assert cancelled.status_code == 200, cancelled.json()
    received = receiver.wait_for(4)
    cancellation = [request.json() for request in received if request.json()["triggerEvent"] == "BOOKING_CANCELLED"]
    assert len(cancellation) == 1
    assert cancellation[0]["payload"]["recurringEvent"] == {"freq": 2, "count": 6, "interval": 1}
    assert Booking.objects.filter(status=BookingStatus.CANCELLED).count() == 3
