"""A series booked together is one message per recipient with one recurring invitation, whose
occurrences a calendar client expands to the booked times across a DST change; a series cancelled
together is one cancellation addressing each occurrence."""

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from dateutil.rrule import rrulestr

from accounts.tests.factories import UserFactory
from notifications.models import EmailMessage
from scheduling.models import Availability
from scheduling.services.recurring import (
    booking_cancel_series,
    booking_decide_series,
    booking_occurrence_create,
    booking_series_create,
)
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 1, tzinfo=ZoneInfo("UTC"))


@pytest.fixture
def event_type():
    organizer = UserFactory(name="Ada", email="ada@example.org", time_zone="Europe/Berlin")
    schedule = ScheduleFactory(
        user=organizer,
        time_zone="Europe/Berlin",
        availability=[{"days_mask": Availability.mask_for(range(7)), "start_time": time(8), "end_time": time(18)}],
    )
    return EventTypeFactory(
        owner=organizer,
        schedule=schedule,
        length=60,
        minimum_booking_notice=0,
        recurring_event={"freq": 2, "interval": 1, "count": 24},
    )


def test_a_series_is_one_message_with_a_recurring_invitation_placed_right_across_dst(
    event_type, smtp_server, django_capture_on_commit_callbacks
):
    # 14 March 2027, 09:00 in Berlin, weekly: the third occurrence is on the day clocks go forward.
    with django_capture_on_commit_callbacks(execute=True):
        bookings = booking_series_create(
            event_type=event_type,
            start=datetime(2027, 3, 14, 9, tzinfo=BERLIN),
            count=5,
            now=NOW,
            attendee_name="Grace",
            attendee_email="grace@example.org",
            attendee_time_zone="UTC",
        )
    assert sorted(address for each in smtp_server.received for address in each.rcpt_tos) == [
        "ada@example.org",
        "grace@example.org",
    ]
    mail = smtp_server.to("grace@example.org")[0]
    event = next(iter(mail.calendar().walk("VEVENT")))
    assert mail.calendar()["METHOD"] == "REQUEST"
    assert str(event["UID"]) == f"{bookings[0].recurring_event_id}@Cal.com"
    start = event.decoded("DTSTART")
    assert event["DTSTART"].params["TZID"] == "Europe/Berlin"
    occurrences = list(rrulestr(event["RRULE"].to_ical().decode(), dtstart=start))
    assert [occurrence.astimezone(BERLIN) for occurrence in occurrences] == [b.start_time for b in bookings]
    assert {occurrence.astimezone(BERLIN).time() for occurrence in occurrences} == {time(9)}
    assert len(mail.text().split("\n  - ")) == 1 + 5 + 1  # five occurrences listed, and the attendee
    assert mail.calendar().walk("VTIMEZONE")

    with django_capture_on_commit_callbacks(execute=True):
        booking_cancel_series(booking=bookings[0], subsequent_only=False, now=NOW, cancellation_reason="Moving")
    cancel = smtp_server.to("grace@example.org")[1]
    assert cancel.calendar()["METHOD"] == "CANCEL"
    events = cancel.calendar().walk("VEVENT")
    assert len(events) == 5 and {str(each["UID"]) for each in events} == {str(event["UID"])}
    assert [each.decoded("RECURRENCE-ID").astimezone(BERLIN) for each in events] == [b.start_time for b in bookings]
    assert all(each["SEQUENCE"] == 1 and each["STATUS"] == "CANCELLED" for each in events)
    assert EmailMessage.objects.count() == 4
    assert date(2027, 3, 28) in {b.start_time.date() for b in bookings}


def test_a_series_request_and_its_decision_are_one_message_each(
    event_type, smtp_server, django_capture_on_commit_callbacks
):
    event_type.requires_confirmation = True
    event_type.save()
    with django_capture_on_commit_callbacks(execute=True):
        bookings = booking_series_create(
            event_type=event_type,
            start=datetime(2027, 3, 14, 9, tzinfo=BERLIN),
            count=3,
            now=NOW,
            attendee_name="Grace",
            attendee_email="grace@example.org",
            attendee_time_zone="UTC",
        )
    with django_capture_on_commit_callbacks(execute=True):
        booking_decide_series(
            booking=bookings[0],
            actor=event_type.owner,
            confirmed=True,
            recurring_event_id=bookings[0].recurring_event_id,
        )
    subjects = [str(mail.message["Subject"]).strip().split(":")[0] for mail in smtp_server.to("grace@example.org")]
    assert subjects == ["Request submitted", "Confirmed"]
    confirmed = smtp_server.to("grace@example.org")[1].calendar()
    event = next(iter(confirmed.walk("VEVENT")))
    assert event["STATUS"] == "CONFIRMED" and event["SEQUENCE"] == 1
    occurrences = list(rrulestr(event["RRULE"].to_ical().decode(), dtstart=event.decoded("DTSTART")))
    assert [occurrence.astimezone(BERLIN) for occurrence in occurrences] == [b.start_time for b in bookings]
    assert len(smtp_server.to("ada@example.org")) == 2


def test_a_series_booked_one_occurrence_per_request_is_announced_once(
    event_type, smtp_server, django_capture_on_commit_callbacks
):
    dates = [datetime(2027, 3, 14, 9, tzinfo=BERLIN) + timedelta(weeks=week) for week in range(3)]
    for index, start in enumerate(dates):
        with django_capture_on_commit_callbacks(execute=True):
            booking_occurrence_create(
                event_type=event_type,
                start=start,
                recurring_event_id="series-one-by-one",
                all_recurring_dates=dates,
                current_recurring_index=index,
                now=NOW,
                attendee_name="Grace",
                attendee_email="grace@example.org",
                attendee_time_zone="UTC",
            )
    mails = smtp_server.to("grace@example.org")
    assert len(mails) == 1
    event = next(iter(mails[0].calendar().walk("VEVENT")))
    occurrences = list(rrulestr(event["RRULE"].to_ical().decode(), dtstart=event.decoded("DTSTART")))
    assert [occurrence.astimezone(BERLIN) for occurrence in occurrences] == dates
