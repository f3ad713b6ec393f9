"""What webhooks need to know about bookings, provided by the app that owns them.

Bookings belong to the scheduling app, which writes into this app's outbox (`webhooks.outbox`,
`webhooks.scheduled`) and so sits above it. The few things webhooks needs the other way round, a
booking's payload, a sample booking for templates and PINGs, a webhook owner's upcoming bookings
and an event type by id, scheduling provides when Django starts (`scheduling.apps`), so that the
layers point one way: no webhooks module imports scheduling.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class BookingSource:
    # (booking, *, trigger, previous=None, attendees=None, payment=None) -> the trigger's payload
    booking_payload: Callable[..., dict]
    # () -> (booking, previous booking, attendee): unsaved instances with every field filled
    sample_booking: Callable[[], tuple]
    # (*, webhook, now) -> the accepted bookings of the webhook's owner not yet over
    upcoming_bookings: Callable[..., object]
    # (booking) -> whether the booking is accepted (only those have MEETING_* triggers)
    is_accepted: Callable[[object], bool]
    # (event_type_id) -> the event type, or None
    event_type: Callable[[int], object | None]


_source: BookingSource | None = None


def provide(source: BookingSource) -> None:
    global _source
    _source = source


def bookings() -> BookingSource:
    if _source is None:
        raise ImproperlyConfigured("No booking source: the scheduling app provides it when Django starts.")
    return _source
