"""The sample payload used to validate templates and sent as the PING of `POST /webhooks/{id}/test`,
and the booking payload of scheduled triggers.

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
    """The booking payload of `scheduling.payloads`, built when a scheduled trigger fires."""
    from scheduling.payloads import booking_payload as build

    return build(booking)
