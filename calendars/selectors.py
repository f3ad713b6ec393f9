"""Reads of connected calendars: the busy time that blocks slots, and what a caller may see."""

from datetime import datetime, timedelta

from django.db.models import Exists, OuterRef, Prefetch, QuerySet
from django.utils import timezone

from calendars.conf import calendar_setting
from calendars.models import BookingReference, BusyTime, CalendarConnection, DestinationCalendar, ExternalCalendar


def calendar_busy(user_id: int, start: datetime, end: datetime) -> tuple[tuple[datetime, datetime], ...]:
    """The busy time cached from the user's selected calendars that overlaps [start, end): one
    indexed read, never a call to a calendar server. The service's own events (the UID of one of
    the user's booking references) are left out: the booking blocks by itself, and must not block
    its own reschedule."""
    own = BookingReference.objects.filter(uid=OuterRef("event_uid"), booking__organizer_id=user_id)
    rows = (
        BusyTime.objects.filter(user_id=user_id, start__lt=end, end__gt=start)
        .exclude(Exists(own))
        .values_list("start", "end")
    )
    return tuple(rows)


def visible_connections(user) -> QuerySet[CalendarConnection]:
    return CalendarConnection.objects.filter(user=user).prefetch_related(
        Prefetch("calendars", queryset=ExternalCalendar.objects.order_by("id"))
    )


def visible_calendars(user) -> QuerySet[ExternalCalendar]:
    return ExternalCalendar.objects.filter(connection__user=user).select_related("connection")


def destination_of(user) -> DestinationCalendar | None:
    return DestinationCalendar.objects.filter(user=user).select_related("calendar__connection").first()


def is_healthy(connection: CalendarConnection, now: datetime | None = None) -> bool:
    """Read successfully, and recently enough: otherwise its busy time may be out of date."""
    now = now or timezone.now()
    if connection.last_error or connection.last_success_at is None:
        return False
    return now - connection.last_success_at <= timedelta(seconds=calendar_setting("STALE_AFTER_SECONDS"))


def visible_references(user) -> QuerySet[BookingReference]:
    return BookingReference.objects.filter(booking__organizer=user).select_related("booking")
