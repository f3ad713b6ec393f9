"""Booking a recurring series in the database: every DST change of 2027 in four kinds of zone,
monthly series over months of different lengths, date overrides, and all-or-nothing conflicts.
The services take `now`, so these 2027 dates stay in the future whenever the suite runs."""

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.core.exceptions import ValidationError

from accounts.tests.factories import UserFactory
from core.exceptions import Conflict
from scheduling.models import Availability, Booking, BookingStatus
from scheduling.services.recurring import booking_occurrence_create, booking_series_create
from scheduling.tests.factories import AvailabilityFactory, BookingFactory, EventTypeFactory, ScheduleFactory
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 1, tzinfo=UTC)
EVERY_DAY = Availability.mask_for(range(7))
WEEKLY_24 = {"freq": 2, "interval": 1, "count": 24}
MONTHLY_12 = {"freq": 1, "interval": 1, "count": 12}
ATTENDEE = {"attendee_name": "Grace Hopper", "attendee_email": "grace@example.org", "attendee_time_zone": "UTC"}


def recurring_event_type(zone: str, *, recurring_event=WEEKLY_24, start=time(8), end=time(18)):
    organizer = UserFactory(time_zone=zone)
    schedule = ScheduleFactory(
        user=organizer, time_zone=zone, availability=[{"days_mask": EVERY_DAY, "start_time": start, "end_time": end}]
    )
    return EventTypeFactory(
        owner=organizer, schedule=schedule, length=60, minimum_booking_notice=0, recurring_event=recurring_event
    )


def walls(bookings, zone: str) -> list[tuple[date, time]]:
    return [
        (booking.start_time.astimezone(ZoneInfo(zone)).date(), booking.start_time.astimezone(ZoneInfo(zone)).time())
        for booking in bookings
    ]


# Each DST change of 2027, as (zone, the local date of the change). A weekly series starts two
# weeks before it on the same weekday, so its third occurrence falls on the day of the change.
CHANGES_2027 = [
    ("Europe/Berlin", date(2027, 3, 28)),
    ("Europe/Berlin", date(2027, 10, 31)),
    ("America/New_York", date(2027, 3, 14)),
    ("America/New_York", date(2027, 11, 7)),
    ("Australia/Lord_Howe", date(2027, 4, 4)),
    ("Australia/Lord_Howe", date(2027, 10, 3)),
    ("Asia/Tokyo", date(2027, 3, 28)),  # no DST: the control
]


@pytest.mark.parametrize(("zone", "change"), CHANGES_2027)
def test_weekly_series_across_each_dst_change_of_2027_stays_at_0900_local(zone, change):
    event_type = recurring_event_type(zone)
    first = datetime.combine(change - timedelta(weeks=2), time(9), tzinfo=ZoneInfo(zone))
    bookings = booking_series_create(event_type=event_type, start=first, count=5, now=NOW, **ATTENDEE)
    assert walls(bookings, zone) == [(change + timedelta(weeks=week - 2), time(9)) for week in range(5)]
    assert len({booking.recurring_event_id for booking in bookings}) == 1
    stored = Booking.objects.filter(recurring_event_id=bookings[0].recurring_event_id).order_by("start_time")
    assert walls(stored, zone) == walls(bookings, zone)
    assert all(booking.end_time - booking.start_time == timedelta(hours=1) for booking in stored)
    offsets = {booking.start_time.astimezone(ZoneInfo(zone)).utcoffset() for booking in stored}
    assert len(offsets) == (1 if zone == "Asia/Tokyo" else 2)


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Tokyo"])
def test_monthly_series_from_the_31st_through_2027_stays_at_0900_and_skips_short_months(zone):
    event_type = recurring_event_type(zone, recurring_event=MONTHLY_12)
    first = datetime(2027, 1, 31, 9, tzinfo=ZoneInfo(zone))
    bookings = booking_series_create(event_type=event_type, start=first, count=7, now=NOW, **ATTENDEE)
    assert walls(bookings, zone) == [(date(2027, month, 31), time(9)) for month in (1, 3, 5, 7, 8, 10, 12)]


def test_series_at_0230_in_berlin_takes_the_jump_in_spring_and_the_first_0230_in_autumn():
    zone = "Europe/Berlin"
    event_type = recurring_event_type(zone, start=time(0), end=time(6))
    event_type.length = 30
    event_type.save()
    spring = booking_series_create(
        event_type=event_type, start=datetime(2027, 3, 21, 2, 30, tzinfo=ZoneInfo(zone)), count=3, now=NOW, **ATTENDEE
    )
    # 02:30 does not exist on 28 March: the documented rule books the jump, 03:00 CEST.
    assert walls(spring, zone) == [
        (date(2027, 3, 21), time(2, 30)),
        (date(2027, 3, 28), time(3)),
        (date(2027, 4, 4), time(2, 30)),
    ]
    autumn = booking_series_create(
        event_type=event_type, start=datetime(2027, 10, 24, 2, 30, tzinfo=ZoneInfo(zone)), count=2, now=NOW, **ATTENDEE
    )
    assert autumn[1].start_time == datetime(2027, 10, 31, 0, 30, tzinfo=UTC)  # 02:30 CEST, the first one


def test_series_crossing_a_day_off_override_books_nothing_and_names_that_occurrence():
    zone = "Europe/Berlin"
    event_type = recurring_event_type(zone)
    AvailabilityFactory(
        schedule=event_type.schedule, days_mask=0, date=date(2027, 3, 29), start_time=time(0), end_time=time(0)
    )
    first = datetime(2027, 3, 15, 9, tzinfo=ZoneInfo(zone))
    with pytest.raises(Conflict) as raised:
        booking_series_create(event_type=event_type, start=first, count=4, now=NOW, **ATTENDEE)
    assert set(raised.value.errors) == {"occurrences[2]"}
    assert "2027-03-29T07:00:00Z (2027-03-29 09:00 Europe/Berlin)" in str(raised.value.detail)
    assert not Booking.objects.exists()
    assert not WebhookDelivery.objects.exists()


def test_series_crossing_an_override_books_when_the_override_keeps_its_time_free():
    zone = "Europe/Berlin"
    event_type = recurring_event_type(zone)
    AvailabilityFactory(
        schedule=event_type.schedule, days_mask=0, date=date(2027, 3, 29), start_time=time(12), end_time=time(14)
    )
    at_noon = booking_series_create(
        event_type=event_type, start=datetime(2027, 3, 15, 12, tzinfo=ZoneInfo(zone)), count=4, now=NOW, **ATTENDEE
    )
    assert walls(at_noon, zone)[2] == (date(2027, 3, 29), time(12))
    with pytest.raises(Conflict) as raised:
        booking_series_create(
            event_type=event_type, start=datetime(2027, 3, 15, 9, tzinfo=ZoneInfo(zone)), count=4, now=NOW, **ATTENDEE
        )
    assert set(raised.value.errors) == {"occurrences[2]"}
    assert Booking.objects.count() == 4


def test_taken_occurrences_are_each_named_and_nothing_is_booked():
    zone = "America/New_York"
    event_type = recurring_event_type(zone)
    first = datetime(2027, 3, 1, 9, tzinfo=ZoneInfo(zone))
    for week in (1, 3):
        taken = first + timedelta(weeks=week)
        taken = datetime.combine(taken.date(), time(9, 30), tzinfo=ZoneInfo(zone))  # overlaps 09:00-10:00
        BookingFactory(
            organizer=event_type.owner,
            event_type=event_type,
            start_time=taken,
            end_time=taken + timedelta(minutes=30),
        )
    with pytest.raises(Conflict) as raised:
        booking_series_create(event_type=event_type, start=first, count=5, now=NOW, **ATTENDEE)
    assert set(raised.value.errors) == {"occurrences[1]", "occurrences[3]"}
    assert Booking.objects.count() == 2
    # A cancelled booking frees its time: the series then books.
    Booking.objects.update(status=BookingStatus.CANCELLED)
    assert len(booking_series_create(event_type=event_type, start=first, count=5, now=NOW, **ATTENDEE)) == 5


@pytest.mark.parametrize(("zone", "change"), CHANGES_2027)
def test_one_request_per_occurrence_builds_the_same_series(zone, change):
    whole = recurring_event_type(zone)
    first = datetime.combine(change - timedelta(weeks=2), time(9), tzinfo=ZoneInfo(zone))
    series = booking_series_create(event_type=whole, start=first, count=5, now=NOW, **ATTENDEE)
    one_by_one = recurring_event_type(zone)
    dates = [booking.start_time for booking in series]
    for index, start in enumerate(dates):
        booking_occurrence_create(
            event_type=one_by_one,
            start=start,
            recurring_event_id="client-series-1",
            all_recurring_dates=dates,
            current_recurring_index=index,
            recurring_count=5,
            now=NOW,
            **ATTENDEE,
        )
    replayed = Booking.objects.filter(recurring_event_id="client-series-1").order_by("start_time")
    assert [booking.start_time for booking in replayed] == dates


def test_one_occurrence_at_a_drifted_time_is_refused_with_the_time_expected():
    zone = "Europe/Berlin"
    event_type = recurring_event_type(zone)
    first = datetime(2027, 3, 21, 9, tzinfo=ZoneInfo(zone))
    # What a booker computing the dates in UTC would send: the week after the change is an hour off.
    drifted = [first.astimezone(UTC) + timedelta(weeks=week) for week in range(3)]
    with pytest.raises(ValidationError) as raised:
        booking_occurrence_create(
            event_type=event_type,
            start=drifted[1],
            recurring_event_id="drift",
            all_recurring_dates=drifted,
            current_recurring_index=1,
            now=NOW,
            **ATTENDEE,
        )
    assert "2027-03-28T07:00:00Z (2027-03-28 09:00 Europe/Berlin)" in raised.value.message_dict["start"][0]
    assert not Booking.objects.exists()
