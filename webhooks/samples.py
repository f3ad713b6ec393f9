"""Payloads that are not built from a stored booking: the sample used to validate templates and
sent as the PING of `POST /webhooks/{id}/test`, and the booking payload of scheduled triggers.

Every trigger this service emits carries the booking payload shape of `scheduling/payloads.py`, so
one sample serves every trigger.
"""

from datetime import UTC


def iso_z(value) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sample_payload(trigger_event: str = "PING") -> dict:
    return {
        "type": "30min",
        "title": "30 min meeting between Ada Lovelace and Grace Hopper",
        "description": "A sample booking, for checking a webhook.",
        "startTime": "2026-11-20T09:00:00Z",
        "endTime": "2026-11-20T09:30:00Z",
        "organizer": {
            "id": 1,
            "name": "Ada Lovelace",
            "email": "ada@example.com",
            "username": "ada",
            "timeZone": "Europe/London",
        },
        "attendees": [{"name": "Grace Hopper", "email": "grace@example.com", "timeZone": "America/New_York"}],
        "uid": "sample-booking-uid",
        "bookingId": 1,
        "status": "ACCEPTED",
        "eventTypeId": 1,
        "location": "https://meet.example.com/sample",
        "price": 0,
        "currency": "usd",
        "metadata": {},
        "rescheduleUid": None,
        "rescheduleStartTime": None,
        "rescheduleEndTime": None,
        "cancellationReason": None,
    }


def booking_payload(booking) -> dict:
    """The booking payload of `scheduling.payloads` when that module provides one, else the same
    shape built here (scheduled triggers fire long after the booking's own transaction)."""
    try:
        from scheduling import payloads
    except ImportError:
        payloads = None
    builder = getattr(payloads, "booking_payload", None)
    if builder is not None:
        return builder(booking)
    organizer = booking.organizer
    event_type = booking.event_type
    rescheduled_from = booking.rescheduled_from
    return {
        "type": event_type.slug if event_type else "",
        "title": booking.title,
        "description": booking.description,
        "startTime": iso_z(booking.start_time),
        "endTime": iso_z(booking.end_time),
        "organizer": {
            "id": organizer.pk,
            "name": organizer.name,
            "email": organizer.email,
            "username": organizer.username,
            "timeZone": organizer.time_zone,
        },
        "attendees": [
            {"name": attendee.name, "email": attendee.email, "timeZone": attendee.time_zone}
            for attendee in booking.attendees.all()
        ],
        "uid": booking.uid,
        "bookingId": booking.pk,
        "status": booking.status,
        "eventTypeId": booking.event_type_id,
        "location": booking.location,
        "price": event_type.price if event_type else 0,
        "currency": event_type.currency if event_type else "usd",
        "metadata": booking.metadata,
        "rescheduleUid": rescheduled_from.uid if rescheduled_from else None,
        "rescheduleStartTime": iso_z(rescheduled_from.start_time) if rescheduled_from else None,
        "rescheduleEndTime": iso_z(rescheduled_from.end_time) if rescheduled_from else None,
        "cancellationReason": booking.cancellation_reason or None,
    }
