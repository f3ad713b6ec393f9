"""Reminders: planned when a booking is accepted from its event type's rules, turned into messages
by beat's sweep at their time, moved by a reschedule, dropped by a cancel, never planned once their
time has passed. Time is driven through the sweep's clock, not slept."""

from datetime import UTC, datetime, time, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from accounts.tests.factories import UserFactory
from notifications.models import EmailMessage, EventTypeNotifications, Reminder
from notifications.sending import sweep
from notifications.services import event_type_mail_settings_set
from scheduling.models import Availability
from scheduling.services.bookings import booking_cancel, booking_create, booking_reschedule_as_new
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

ALL_DAY = [{"days_mask": Availability.mask_for(range(7)), "start_time": time(0), "end_time": time(23, 59)}]


def next_slot(after: datetime) -> datetime:
    """The first half-hour boundary at least five minutes after `after` (a slot of the all-day
    schedule: 23:30 would end past 23:59, so the next day's 00:00 then)."""
    start = (after + timedelta(minutes=5)).replace(second=0, microsecond=0)
    start += timedelta(minutes=(30 - start.minute % 30) % 30)
    return start + timedelta(minutes=30) if start.time() == time(23, 30) else start


@pytest.fixture
def event_type():
    organizer = UserFactory(name="Ada", email="ada@example.org", time_zone="UTC")
    schedule = ScheduleFactory(user=organizer, time_zone="UTC", availability=ALL_DAY)
    event_type = EventTypeFactory(owner=organizer, schedule=schedule, length=30, minimum_booking_notice=0)
    event_type_mail_settings_set(
        event_type=event_type,
        reminders=[{"minutesBefore": 3, "to": "both"}, {"minutesBefore": 240, "to": "attendee"}],
    )
    return event_type


def book(event_type, start, captured):
    with captured(execute=True):
        return booking_create(
            event_type=event_type,
            start=start,
            attendee_name="Grace",
            attendee_email="grace@example.org",
            attendee_time_zone="Europe/Berlin",
            locale="de",
        )


def reminders_sent(smtp_server) -> list[str]:
    return [
        address
        for each in smtp_server.received
        if "Erinnerung" in str(each.message["Subject"]) or "Reminder" in str(each.message["Subject"])
        for address in each.rcpt_tos
    ]


def test_a_booking_minutes_ahead_is_reminded_at_its_time_and_not_before(
    event_type, smtp_server, django_capture_on_commit_callbacks
):
    start = next_slot(timezone.now())
    booking = book(event_type, start, django_capture_on_commit_callbacks)
    # 240 minutes before had passed when it was booked: only the 3-minute reminder is planned.
    assert list(Reminder.objects.values_list("minutes_before", "send_at")) == [(3, start - timedelta(minutes=3))]

    with django_capture_on_commit_callbacks(execute=True):
        sweep(now=start - timedelta(minutes=4))
    assert reminders_sent(smtp_server) == []
    with django_capture_on_commit_callbacks(execute=True):
        sweep(now=start - timedelta(minutes=3))
    assert sorted(reminders_sent(smtp_server)) == ["ada@example.org", "grace@example.org"]
    german = smtp_server.to("grace@example.org")[-1]
    assert str(german.message["Subject"]).strip().startswith("Erinnerung:")
    assert "3 Minuten" in german.text()
    assert (
        next(iter(german.calendar().walk("VEVENT")))["UID"]
        == next(iter(smtp_server.to("grace@example.org")[0].calendar().walk("VEVENT")))["UID"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        sweep(now=start - timedelta(minutes=2))  # a later pass sends it no second time
    assert len(reminders_sent(smtp_server)) == 2
    assert EmailMessage.objects.filter(booking=booking, kind="reminder").count() == 2


def test_a_reschedule_moves_the_reminders_and_a_cancel_drops_them(
    event_type, smtp_server, django_capture_on_commit_callbacks
):
    start = next_slot(timezone.now()) + timedelta(hours=6)
    booking = book(event_type, start, django_capture_on_commit_callbacks)
    assert Reminder.objects.filter(booking=booking).count() == 2
    later = start + timedelta(days=1)
    with django_capture_on_commit_callbacks(execute=True):
        moved = booking_reschedule_as_new(booking=booking, start=later)
    assert not Reminder.objects.filter(booking=booking).exists()
    assert sorted(Reminder.objects.filter(booking=moved).values_list("send_at", flat=True)) == [
        later - timedelta(minutes=240),
        later - timedelta(minutes=3),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        booking_cancel(booking=moved, cancellation_reason="No longer needed")
    assert not Reminder.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        sweep(now=later)
    assert reminders_sent(smtp_server) == []


def test_reminder_rules_are_checked():
    event_type = EventTypeFactory()
    for reminders in (
        [{"minutesBefore": 0, "to": "attendee"}],
        [{"minutesBefore": 60, "to": "everyone"}],
        [{"minutesBefore": 60}, {"minutesBefore": 60}],
        [{"minutesBefore": "60"}],
        [{"minutesBefore": 60, "extra": 1}],
    ):
        with pytest.raises(ValidationError):
            event_type_mail_settings_set(event_type=event_type, reminders=reminders)
    assert not EventTypeNotifications.objects.filter(event_type_id=event_type.pk).exists()


def test_reminders_survive_as_rows_and_a_sweep_after_a_restart_still_sends_them(
    event_type, smtp_server, django_capture_on_commit_callbacks
):
    start = next_slot(timezone.now()) + timedelta(hours=6)
    book(event_type, start, django_capture_on_commit_callbacks)
    # A beat that was down past the reminder's time sends it on its first pass, while the meeting
    # has not started; a booking already started gets none.
    with django_capture_on_commit_callbacks(execute=True):
        sweep(now=start - timedelta(minutes=1))
    assert sorted(reminders_sent(smtp_server)) == ["ada@example.org", "grace@example.org", "grace@example.org"]
    assert datetime.now(UTC) < start


def test_beat_sweeps_often_enough_for_reminders_within_a_minute(settings):
    sweep_entry = settings.CELERY_BEAT_SCHEDULE["notifications-sweep"]
    assert sweep_entry["task"] == "notifications.sweep"
    assert sweep_entry["schedule"] <= 30
    assert settings.CELERY_BEAT_SCHEDULE["notifications-purge"]["task"] == "notifications.purge_messages"
