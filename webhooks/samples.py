"""Sample payloads: what templates are checked against on create/update, and the PING of
`POST /webhooks/{id}/test`; plus the payload of scheduled triggers when they fire.

A sample is built by the real payload builder (`scheduling.payloads`) from unsaved model
instances, so it always has exactly the keys the trigger's real payload can have: those sent only
when they apply (`cancellationReason`, `rescheduleUid`, `paymentId`, `smsReminderNumber`, …) are
filled in so that templates may use them.
"""

from datetime import UTC, datetime


def _sample_booking():
    from accounts.models import User
    from scheduling.models import Attendee, Booking, BookingStatus, EventType

    organizer = User(
        pk=1, name="Ada Lovelace", email="ada@example.com", username="ada", time_zone="Europe/London", locale="en"
    )
    event_type = EventType(
        pk=1,
        owner=organizer,
        title="30 min",
        slug="30min",
        description="A sample event type, for checking a webhook.",
        length=30,
        price=0,
        currency="usd",
    )
    previous = Booking(
        pk=1,
        uid="sample-previous-booking-uid",
        start_time=datetime(2026, 11, 19, 9, 0, tzinfo=UTC),
        end_time=datetime(2026, 11, 19, 9, 30, tzinfo=UTC),
    )
    booking = Booking(
        pk=2,
        uid="sample-booking-uid",
        organizer=organizer,
        event_type=event_type,
        title="30 min between Ada Lovelace and Grace Hopper",
        description="Looking forward to it.",
        start_time=datetime(2026, 11, 20, 9, 0, tzinfo=UTC),
        end_time=datetime(2026, 11, 20, 9, 30, tzinfo=UTC),
        status=BookingStatus.ACCEPTED,
        location="https://meet.example.com/sample",
        metadata={},
        cancellation_reason="A sample reason",
        cancelled_by="grace@example.com",
        rescheduled=False,
        rescheduled_from=previous,
        responses={"name": "Grace Hopper", "email": "grace@example.com", "company": "Navy"},
        custom_inputs={},
        sms_reminder_number="+15555550100",
        ical_sequence=0,
        created_at=datetime(2026, 11, 18, 9, 0, tzinfo=UTC),
        updated_at=datetime(2026, 11, 18, 9, 0, tzinfo=UTC),
    )
    attendee = Attendee(pk=1, name="Grace Hopper", email="grace@example.com", time_zone="America/New_York")
    return booking, previous, attendee


class _SamplePayment:
    pk = 1


def sample_payload(trigger_event: str = "PING") -> dict:
    """The payload of `trigger_event` for a sample booking (PING: that of BOOKING_CREATED)."""
    from scheduling.payloads import booking_payload as build

    booking, previous, attendee = _sample_booking()
    return build(booking, trigger=trigger_event, previous=previous, attendees=[attendee], payment=_SamplePayment())


def booking_payload(booking, trigger: str) -> dict:
    """The payload of `trigger` for `booking`, built when a scheduled trigger fires."""
    from scheduling.payloads import booking_payload as build

    return build(booking, trigger=trigger)
