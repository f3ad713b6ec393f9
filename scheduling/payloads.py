"""The webhook payload of a booking: everything a receiver needs without calling back.

One shape for every booking trigger (and for MEETING_STARTED / MEETING_ENDED); it is documented
with examples in docs/webhook-payloads.md and mirrored by `webhooks.samples.sample_payload`.
Reads `booking.organizer`, `booking.event_type` and `booking.attendees.all()`; select/prefetch
them when building many payloads.
"""

from __future__ import annotations

from datetime import UTC, datetime

PAYLOAD_KEYS = (
    "type",
    "title",
    "description",
    "startTime",
    "endTime",
    "organizer",
    "attendees",
    "uid",
    "bookingId",
    "status",
    "eventTypeId",
    "location",
    "price",
    "currency",
    "metadata",
    "rescheduleUid",
    "rescheduleStartTime",
    "rescheduleEndTime",
    "cancellationReason",
)


def iso_utc(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def booking_payload(booking, *, previous=None, attendees=None) -> dict:
    """The payload for `booking`; `previous` is the booking as it was before a reschedule.

    Without `previous`, a booking created by rescheduling another (`rescheduled_from`) reports that
    one, so scheduled triggers built later carry the same reschedule fields. `attendees`: the
    booking's, when the caller has them (it has just written them), to save their query.
    """
    organizer = booking.organizer
    event_type = booking.event_type
    before = previous if previous is not None else booking.rescheduled_from
    return {
        "type": event_type.slug if event_type else "",
        "title": booking.title,
        "description": booking.description,
        "startTime": iso_utc(booking.start_time),
        "endTime": iso_utc(booking.end_time),
        "organizer": {
            "id": organizer.pk,
            "name": organizer.name,
            "email": organizer.email,
            "username": organizer.username,
            "timeZone": organizer.time_zone,
        },
        "attendees": [
            {"name": attendee.name, "email": attendee.email, "timeZone": attendee.time_zone}
            for attendee in (booking.attendees.all() if attendees is None else attendees)
        ],
        "uid": booking.uid,
        "bookingId": booking.pk,
        "status": booking.status,
        "eventTypeId": booking.event_type_id,
        "location": booking.location,
        "price": event_type.price if event_type else 0,
        "currency": event_type.currency if event_type else "usd",
        "metadata": booking.metadata,
        "rescheduleUid": before.uid if before is not None else None,
        "rescheduleStartTime": iso_utc(before.start_time) if before is not None else None,
        "rescheduleEndTime": iso_utc(before.end_time) if before is not None else None,
        "cancellationReason": booking.cancellation_reason or None,
    }
