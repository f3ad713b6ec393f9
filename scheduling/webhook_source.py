"""The booking source of the webhooks app (webhooks.sources): what webhooks needs to know about
bookings without importing this app. Registered in `scheduling.apps`."""

from datetime import UTC, datetime

from accounts.models import User
from scheduling.models import Attendee, Booking, BookingStatus, EventType
from scheduling.payloads import booking_payload
from webhooks.sources import BookingSource


def sample_booking() -> tuple[Booking, Booking, Attendee]:
    """A booking, the one it rescheduled and an attendee, unsaved, with every field a payload can
    carry filled in (those sent only when they apply too), for templates and PINGs."""
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


def upcoming_bookings(*, webhook, now):
    if webhook.event_type_id is not None:
        bookings = Booking.objects.filter(event_type_id=webhook.event_type_id)
    elif webhook.team_id is not None:
        bookings = Booking.objects.filter(event_type__team_id=webhook.team_id)
    elif webhook.user_id is not None:
        bookings = Booking.objects.filter(organizer_id=webhook.user_id)
    else:
        return Booking.objects.none()
    return bookings.filter(status=BookingStatus.ACCEPTED, end_time__gt=now).only("id", "start_time", "end_time")


def is_accepted(booking) -> bool:
    return booking.status == BookingStatus.ACCEPTED


def event_type(event_type_id: int) -> EventType | None:
    return EventType.objects.filter(pk=event_type_id).first()


SOURCE = BookingSource(
    booking_payload=booking_payload,
    sample_booking=sample_booking,
    upcoming_bookings=upcoming_bookings,
    is_accepted=is_accepted,
    event_type=event_type,
)
