"""Sample payloads: what templates are checked against on create/update, and the PING of
`POST /webhooks/{id}/test`; plus the payload of scheduled triggers when they fire.

A sample is built by the real payload builder from unsaved model instances (both provided by the
scheduling app, webhooks.sources), so it always has exactly the keys the trigger's real payload can
have: those sent only when they apply (`cancellationReason`, `rescheduleUid`, `paymentId`,
`smsReminderNumber`, …) are filled in so that templates may use them. OOO_CREATED's is an
out-of-office entry's payload, provided by its app the same way (`provide_sample`).
"""

from collections.abc import Callable

from webhooks.sources import bookings

# The sample payload of a trigger that is not about a booking (OOO_CREATED), by trigger: provided
# when Django starts by the app whose event it is (holds.apps), which sits above this one.
_other_samples: dict[str, Callable[[], dict]] = {}


def provide_sample(trigger: str, build: Callable[[], dict]) -> None:
    _other_samples[trigger] = build


class _SamplePayment:
    pk = 1


def sample_payload(trigger_event: str = "PING") -> dict:
    """The payload of `trigger_event` for a sample booking (PING: that of BOOKING_CREATED), or the
    sample its app provides for a trigger that is not about a booking (`provide_sample`)."""
    build = _other_samples.get(trigger_event)
    if build is not None:
        return build()
    source = bookings()
    booking, previous, attendee = source.sample_booking()
    return source.booking_payload(
        booking, trigger=trigger_event, previous=previous, attendees=[attendee], payment=_SamplePayment()
    )


def booking_payload(booking, trigger: str) -> dict:
    """The payload of `trigger` for `booking`, built when a scheduled trigger fires."""
    return bookings().booking_payload(booking, trigger=trigger)
