"""The database itself refuses rows that break the scheduling models' rules."""

from datetime import date, time, timedelta

import pytest

from accounts.tests.factories import TeamFactory
from scheduling.models import Availability, Booking, BookingStatus, EventType
from scheduling.tests.factories import AvailabilityFactory, BookingFactory, EventTypeFactory
from tests.support.database import refused_by

pytestmark = pytest.mark.django_db


# --- Availability ----------------------------------------------------------------------------


def test_a_day_outside_sunday_to_saturday_is_refused():
    with refused_by("availability_days_in_week"):
        AvailabilityFactory(days_mask=1 << 7)

    assert not Availability.objects.exists()


@pytest.mark.parametrize(
    ("days_mask", "override_date"),
    [(0, None), (Availability.mask_for([1]), date(2026, 12, 24))],
    ids=["weekly rule without days", "date override with days"],
)
def test_a_row_is_either_a_weekly_rule_or_a_date_override(days_mask, override_date):
    with refused_by("availability_weekly_or_override"):
        AvailabilityFactory(days_mask=days_mask, date=override_date)


@pytest.mark.parametrize(
    ("start_time", "end_time", "override_date"),
    [
        (time(17), time(9), None),
        (time(9), time(9), None),
        (time(0), time(0), None),
        (time(12), time(11), date(2026, 12, 24)),
    ],
    ids=["weekly end before start", "weekly empty", "weekly midnight to midnight", "override end before start"],
)
def test_availability_must_end_after_it_starts(start_time, end_time, override_date):
    days_mask = 0 if override_date else Availability.mask_for([1])
    with refused_by("availability_start_before_end"):
        AvailabilityFactory(start_time=start_time, end_time=end_time, date=override_date, days_mask=days_mask)


def test_an_all_day_off_override_is_the_one_allowed_empty_range():
    override = AvailabilityFactory(days_mask=0, date=date(2026, 12, 24), start_time=time(0), end_time=time(0))

    assert Availability.objects.get(pk=override.pk).days == []


# --- Event types -----------------------------------------------------------------------------


def test_an_event_type_owned_by_a_user_and_a_team_at_once_is_refused():
    with refused_by("event_type_one_owner"):
        EventTypeFactory(team=TeamFactory())


def test_an_event_type_without_an_owner_is_refused():
    with refused_by("event_type_one_owner"):
        EventTypeFactory(owner=None, schedule=None)


@pytest.mark.parametrize(
    ("field", "value", "constraint"),
    [
        ("length", 0, "event_type_length_positive"),
        ("slot_interval", 0, "event_type_interval_positive"),
        ("currency", "USD", "event_type_currency_iso"),
        ("currency", "us1", "event_type_currency_iso"),
        ("price", -1, "scheduling_eventtype_price_check"),
        ("minimum_booking_notice", -1, "scheduling_eventtype_minimum_booking_notice_check"),
        ("before_event_buffer", -1, "scheduling_eventtype_before_event_buffer_check"),
        ("after_event_buffer", -1, "scheduling_eventtype_after_event_buffer_check"),
    ],
)
def test_an_event_type_with_an_out_of_range_value_is_refused(field, value, constraint):
    event_type = EventTypeFactory()

    with refused_by(constraint):
        EventType.objects.filter(pk=event_type.pk).update(**{field: value})


def test_one_user_cannot_have_two_event_types_with_the_same_slug():
    event_type = EventTypeFactory(slug="30min")

    with refused_by("event_type_owner_slug_unique"):
        EventTypeFactory(owner=event_type.owner, slug="30min")


def test_one_team_cannot_have_two_event_types_with_the_same_slug():
    team = TeamFactory()
    EventTypeFactory(owner=None, team=team, schedule=None, slug="intro")

    with refused_by("event_type_team_slug_unique"):
        EventTypeFactory(owner=None, team=team, schedule=None, slug="intro")


def test_the_same_slug_is_fine_for_different_owners():
    EventTypeFactory(slug="30min")
    EventTypeFactory(slug="30min")

    assert EventType.objects.filter(slug="30min").count() == 2


# --- Bookings --------------------------------------------------------------------------------


def test_a_booking_must_end_after_it_starts():
    booking = BookingFactory()

    with refused_by("booking_ends_after_start"):
        Booking.objects.filter(pk=booking.pk).update(end_time=booking.start_time)


def test_a_booking_status_outside_the_contract_is_refused():
    booking = BookingFactory()

    with refused_by("booking_status_valid"):
        Booking.objects.filter(pk=booking.pk).update(status="DONE")


def test_two_bookings_cannot_share_a_uid():
    booking = BookingFactory()

    with refused_by("scheduling_booking_uid_key"):
        BookingFactory(uid=booking.uid)


def test_one_organizer_cannot_have_two_overlapping_live_bookings():
    booking = BookingFactory()

    with refused_by("booking_no_overlap_per_organizer"):
        BookingFactory(
            organizer=booking.organizer,
            event_type=booking.event_type,
            start_time=booking.start_time + timedelta(minutes=15),
            status=BookingStatus.PENDING,
        )


def test_a_cancelled_booking_does_not_block_its_slot():
    booking = BookingFactory(status=BookingStatus.CANCELLED)

    BookingFactory(organizer=booking.organizer, event_type=booking.event_type, start_time=booking.start_time)

    assert Booking.objects.filter(organizer=booking.organizer).count() == 2
