"""What connected calendars need to know about bookings, provided by the app that owns them.

Bookings belong to the scheduling app, which reads this app's busy time and writes into its outbox
(`calendars.models.CalendarWrite`), so it sits above it. The one thing calendars need the other way round, a
booking as a calendar event, scheduling provides when Django starts (`scheduling.apps`), as it does
for webhooks (`webhooks.sources`)."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class BookingEvent:
    """A booking as its calendar event: the newest booking of a chain of reschedules, under the UID
    of the first."""

    booking_id: int
    organizer_id: int
    organizer_name: str
    organizer_email: str
    # The event's UID: the same for the booking and every booking that rescheduled it.
    uid: str
    sequence: int
    title: str
    description: str
    location: str
    start: datetime
    end: datetime
    # Whether the meeting takes place (accepted or pending): otherwise the event is removed.
    active: bool
    tentative: bool  # pending the organizer's confirmation
    attendees: tuple[tuple[str, str], ...]  # (name, email)


@dataclass(frozen=True)
class BookingSource:
    # (booking_id) -> the booking as an event, or None if it no longer exists
    booking_event: Callable[[int], BookingEvent | None]
    # (booking_id) -> the id of the booking's organizer, or None if there is no such booking
    booking_organizer_id: Callable[[int], int | None]


_source: BookingSource | None = None


def provide(source: BookingSource) -> None:
    global _source
    _source = source


def bookings() -> BookingSource:
    if _source is None:
        raise ImproperlyConfigured("No booking source: the scheduling app provides it when Django starts.")
    return _source
