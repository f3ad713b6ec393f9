"""Sample payloads: what templates are checked against on create/update, and the PING of
`POST /webhooks/{id}/test`; plus the payload of scheduled triggers when they fire.

A sample is built by the real payload builder from unsaved model instances (both provided by the
scheduling app, webhooks.sources), so it always has exactly the keys the trigger's real payload can
have: those sent only when they apply (`cancellationReason`, `rescheduleUid`, `paymentId`,
`smsReminderNumber`, …) are filled in so that templates may use them.
"""

from webhooks.sources import bookings


class _SamplePayment:
    pk = 1


def sample_payload(trigger_event: str = "PING") -> dict:
    """The payload of `trigger_event` for a sample booking (PING: that of BOOKING_CREATED)."""
    source = bookings()
    booking, previous, attendee = source.sample_booking()
    return source.booking_payload(
        booking, trigger=trigger_event, previous=previous, attendees=[attendee], payment=_SamplePayment()
    )


def booking_payload(booking, trigger: str) -> dict:
    """The payload of `trigger` for `booking`, built when a scheduled trigger fires."""
    return bookings().booking_payload(booking, trigger=trigger)
