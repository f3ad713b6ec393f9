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
class FeedEntry:
    """A booking as an event of a user's calendar feed (calendars.feeds)."""

    uid: str  # the meeting's iCalUID, as the destination calendar's event
    sequence: int
    status: str  # iCalendar's: CONFIRMED, TENTATIVE or CANCELLED
    title: str
    description: str
    location: str
    start: datetime
    end: datetime
    created_at: datetime
    updated_at: datetime
    organizer_name: str
    organizer_email: str
    attendees: tuple[tuple[str, str], ...]  # (name, email); empty unless asked for


@dataclass(frozen=True)
class FeedWindow:
    """Which bookings a feed shows: starting in [start, end), at most `upcoming_limit` from `now`
    on (the soonest) and `past_limit` before it (the latest); cancelled ones only when cancelled
    at or after `cancelled_since`."""

    start: datetime
    end: datetime
    now: datetime
    cancelled_since: datetime
    upcoming_limit: int
    past_limit: int


@dataclass(frozen=True)
class BookingSource:
    # (booking_id) -> the booking as an event, or None if it no longer exists
    booking_event: Callable[[int], BookingEvent | None]
    # (booking_id) -> the id of the booking's organizer, or None if there is no such booking
    booking_organizer_id: Callable[[int], int | None]
    # (user_id, window, with_attendees) -> (the bookings the user organises or hosts in the window,
    # oldest first; whether a limit left some out)
    feed_entries: Callable[[int, FeedWindow, bool], tuple[list[FeedEntry], bool]] | None = None


_source: BookingSource | None = None


def provide(source: BookingSource) -> None:
    global _source
    _source = source


def bookings() -> BookingSource:
    if _source is None:
        raise ImproperlyConfigured("No booking source: the scheduling app provides it when Django starts.")
    return _source
