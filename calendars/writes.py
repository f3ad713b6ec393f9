"""Writing bookings into the organizer's destination calendar: an outbox, like webhook deliveries.

The booking service records "booking N changed" (`booking_changed`) in the transaction of the
change, with one statement that writes a row only when the organizer has a destination calendar.
After commit the worker applies it (`apply_writes`); a write that fails stays due and is retried
(`CALENDARS["WRITE_RETRY_SECONDS"]`, then beat's sweep), so none is lost while the server is down.

Applying does not replay the change: it brings the one event of the meeting to what the booking is
now. The event's resource on the server is named after its UID (stable across reschedules, also
v1's reschedule into a new booking), so a PUT that is retried after an unknown outcome replaces the
same event and never doubles it; a cancelled meeting's event is deleted (one already gone counts).
Every write raises the event's SEQUENCE.
"""

import logging
from datetime import timedelta

import icalendar
from django.db import connection, transaction
from django.utils import timezone

from calendars import crypto
from calendars.conf import calendar_setting
from calendars.dispatch import enqueue_writes
from calendars.models import (
    OAUTH_KINDS,
    BookingReference,
    CalendarWrite,
    ConnectionKind,
    DestinationCalendar,
    WriteAction,
)
from calendars.oauth import remove_event, write_event
from calendars.oauth.http import RateLimited
from calendars.providers import ProviderError, caldav_delete, caldav_put, event_href
from calendars.sources import BookingEvent, bookings

logger = logging.getLogger(__name__)

REFERENCE_TYPES = {
    ConnectionKind.CALDAV: "caldav_calendar",
    ConnectionKind.APPLE: "apple_calendar",
    ConnectionKind.GOOGLE: "google_calendar",
    ConnectionKind.OFFICE365: "office365_calendar",
}


def _href(calendar, uid: str) -> str:
    """Where the event is on a CalDAV server; Google and Microsoft name it themselves when it is
    first written (their event id, kept here)."""
    return "" if calendar.connection.kind in OAUTH_KINDS else event_href(calendar.external_id, uid)


def _put(reference: BookingReference, event: BookingEvent, sequence: int) -> None:
    if reference.connection.kind in OAUTH_KINDS:
        write_event(reference, event, sequence)
    else:
        caldav_put(crypto.decrypt(reference.connection.credentials), reference.href, event_ics(event, sequence))


def _remove(reference: BookingReference) -> None:
    if reference.connection.kind in OAUTH_KINDS:
        remove_event(reference)
    else:
        caldav_delete(crypto.decrypt(reference.connection.credentials), reference.href)


def booking_changed(booking, *, removed: bool = False) -> None:
    """Record that the booking's calendar event must be brought up to date (one INSERT … SELECT:
    no row, and no message, when the organizer has no destination calendar and the meeting was
    never written)."""
    writes, destinations = CalendarWrite._meta.db_table, DestinationCalendar._meta.db_table
    references = BookingReference._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {writes} (booking_id, action, attempts, due_at, last_error, created_at) "
            "SELECT %s, %s, 0, now(), '', now() "
            f"WHERE EXISTS (SELECT 1 FROM {destinations} WHERE user_id = %s) "
            f"OR EXISTS (SELECT 1 FROM {references} WHERE booking_id = %s OR booking_id = %s) RETURNING id",
            [
                booking.pk,
                WriteAction.DELETE if removed else WriteAction.PUT,
                booking.organizer_id,
                booking.pk,
                booking.rescheduled_from_id,
            ],
        )
        if cursor.fetchone() is not None:
            enqueue_writes(booking.pk)


def event_ics(event: BookingEvent, sequence: int) -> str:
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//Scheduling service//Bookings//EN")
    calendar.add("version", "2.0")
    vevent = icalendar.Event()
    vevent.add("uid", event.uid)
    vevent.add("dtstamp", timezone.now())
    vevent.add("dtstart", event.start)
    vevent.add("dtend", event.end)
    vevent.add("sequence", sequence)
    vevent.add("summary", event.title)
    if event.description:
        vevent.add("description", event.description)
    if event.location:
        vevent.add("location", event.location)
    vevent.add("status", "TENTATIVE" if event.tentative else "CONFIRMED")
    add_people(vevent, event.organizer_name, event.organizer_email, event.attendees)
    calendar.add_component(vevent)
    return calendar.to_ical().decode()


def add_people(vevent: icalendar.Event, organizer_name: str, organizer_email: str, attendees) -> None:
    """The meeting's ORGANIZER and its ATTENDEEs ((name, email) pairs), as every event this
    service writes names them."""
    organizer = icalendar.vCalAddress(f"mailto:{organizer_email}")
    organizer.params["cn"] = icalendar.vText(organizer_name)
    vevent.add("organizer", organizer)
    for name, email in attendees:
        attendee = icalendar.vCalAddress(f"mailto:{email}")
        if name:
            attendee.params["cn"] = icalendar.vText(name)
        attendee.params["role"] = icalendar.vText("REQ-PARTICIPANT")
        attendee.params["partstat"] = icalendar.vText("NEEDS-ACTION")
        vevent.add("attendee", attendee, encode=0)


def _sync(event: BookingEvent) -> None:
    """Bring the meeting's one event to the booking's state (raises ProviderError on failure)."""
    reference = BookingReference.objects.filter(uid=event.uid).select_related("calendar", "connection").first()
    if not event.active:
        if reference is not None and not reference.deleted and reference.connection is not None:
            _remove(reference)
            BookingReference.objects.filter(pk=reference.pk).update(deleted=True)
        return
    if reference is None or reference.calendar is None or reference.connection is None:
        destination = (
            DestinationCalendar.objects.filter(user_id=event.organizer_id)
            .select_related("calendar__connection")
            .first()
        )
        if destination is None:
            return
        calendar = destination.calendar
        # Recorded before the event is written: a read of the calendar in between already knows
        # the event as the service's own.
        if reference is None:
            reference = BookingReference.objects.create(
                booking_id=event.booking_id,
                type=REFERENCE_TYPES.get(calendar.connection.kind, "caldav_calendar"),
                uid=event.uid,
                calendar=calendar,
                connection=calendar.connection,
                external_calendar_id=calendar.external_id,
                href=_href(calendar, event.uid),
                sequence=event.sequence,
            )
            sequence = event.sequence
        else:
            sequence = max(event.sequence, reference.sequence + 1)
            reference.calendar, reference.connection = calendar, calendar.connection
            reference.external_calendar_id = calendar.external_id
            reference.href = _href(calendar, event.uid)
    else:
        sequence = max(event.sequence, reference.sequence + 1)
    _put(reference, event, sequence)
    reference.booking_id, reference.sequence, reference.deleted = event.booking_id, sequence, None
    reference.save()


def apply_writes(booking_id: int) -> bool:
    """Apply the due writes of one booking (one worker at a time: the rows are locked, others skip).
    True when done or nothing was due."""
    now = timezone.now()
    with transaction.atomic():
        due = list(
            CalendarWrite.objects.select_for_update(skip_locked=True).filter(
                booking_id=booking_id, done_at__isnull=True
            )
        )
        if not due:
            return True
        event = bookings().booking_event(booking_id)
        try:
            if event is not None:
                _sync(event)
        except (ProviderError, crypto.CredentialsUnreadable) as error:
            schedule = calendar_setting("WRITE_RETRY_SECONDS")
            for write in due:
                delay = schedule[min(write.attempts, len(schedule) - 1)]
                # A provider that asked to wait (HTTP 429, Retry-After) is not asked sooner.
                delay = max(delay, error.retry_after if isinstance(error, RateLimited) else 0)
                write.attempts += 1
                write.due_at = now + timedelta(seconds=delay)
                write.last_error = str(error)[:500]
            CalendarWrite.objects.bulk_update(due, ["attempts", "due_at", "last_error"])
            logger.info("Calendar write for booking %s failed: %s", booking_id, error)
            return False
        CalendarWrite.objects.filter(pk__in=[write.pk for write in due]).update(done_at=now)
    return True


def due_write_bookings(now=None, limit: int = 500) -> list[int]:
    """Bookings with a write due (beat's sweep applies them)."""
    now = now or timezone.now()
    rows = CalendarWrite.objects.filter(done_at__isnull=True, due_at__lte=now).order_by("due_at")
    return list(dict.fromkeys(rows.values_list("booking_id", flat=True)[:limit]))
