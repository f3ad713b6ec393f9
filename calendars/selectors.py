"""Reads of connected calendars: the busy time that blocks slots, and what a caller may see."""

from datetime import datetime, timedelta

from django.db.models import Exists, IntegerField, OuterRef, Prefetch, QuerySet, Value
from django.utils import timezone

from calendars.conf import calendar_setting
from calendars.models import (
    INTEGRATION_TYPES,
    BookingReference,
    BusyTime,
    CalendarConnection,
    DestinationCalendar,
    ExternalCalendar,
)
from core.exceptions import Conflict


def busy_times(user, start, end) -> QuerySet[BusyTime]:
    """The busy time cached from the user's selected calendars that overlaps [start, end) (each
    argument a value or a `core.fastpath.compiled_queries.Parameter`): an indexed read, never a call to a
    calendar server. The service's own events (the UID of one of the user's booking references)
    are left out: the booking blocks by itself, and must not block its own reschedule."""
    own = BookingReference.objects.filter(uid=OuterRef("event_uid"), booking__organizer_id=OuterRef("user_id"))
    return BusyTime.objects.filter(user_id=user, start__lt=end, end__gt=start).exclude(Exists(own)).order_by()


def busy_rows_with_buffers(user, start, end) -> QuerySet:
    """`busy_times` as rows of (start, end, NULL, NULL): the shape of slot computation's bookings
    with their buffers, so that its one query takes calendar busy time with a UNION ALL and a
    GET /slots costs no extra round trip."""
    none = Value(None, output_field=IntegerField())
    return busy_times(user, start, end).values_list("start", "end", none, none)


def calendar_busy(user_id: int, start: datetime, end: datetime) -> tuple[tuple[datetime, datetime], ...]:
    return tuple(busy_times(user_id, start, end).values_list("start", "end"))


def refuse_if_calendar_busy(booking) -> None:
    """A pending booking confirmed into busy time that appeared on the organizer's calendars since
    it was requested is a 409, as a booking into it would be."""
    if busy_times(booking.organizer_id, booking.start_time, booking.end_time).exists():
        raise Conflict(f"{booking.start_time:%Y-%m-%dT%H:%M:%SZ} is busy in the organizer's connected calendar.")


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


def calendar_by_external_id(
    user, *, integration: str, external_id: str, credential_id: int | None = None
) -> ExternalCalendar | None:
    """One of the user's calendars by Cal.com's keys (the integration type, the calendar's external
    id, optionally the credential's id)."""
    kinds = [kind for kind, name in INTEGRATION_TYPES.items() if name == integration]
    calendars = visible_calendars(user).filter(connection__kind__in=kinds, external_id=external_id)
    if credential_id is not None:
        calendars = calendars.filter(connection_id=credential_id)
    return calendars.first()


def busy_times_of(user, start: datetime, end: datetime, calendar_ids: list[int] | None = None):
    """The cached busy time of the user's selected calendars (or of these), with its calendar."""
    rows = busy_times(user.pk, start, end).select_related("calendar__connection").order_by("start", "end")
    if calendar_ids is not None:
        rows = rows.filter(calendar_id__in=calendar_ids)
    return rows


def visible_references(user) -> QuerySet[BookingReference]:
    return BookingReference.objects.filter(booking__organizer=user).select_related("booking")


def selected_calendar_list(*, user, user_ids: list[int] | None = None) -> QuerySet[ExternalCalendar]:
    """v1's selected calendars: the caller's calendars whose busy time blocks slots (a system admin:
    everyone's, narrowed by `user_ids`)."""
    calendars = ExternalCalendar.objects.filter(is_selected=True).select_related("connection")
    if not user.is_system_admin:
        calendars = calendars.filter(connection__user=user)
    if user_ids is not None:
        calendars = calendars.filter(connection__user_id__in=user_ids)
    return calendars.order_by("id")


def destination_calendar_list(*, user, user_ids: list[int] | None = None) -> QuerySet[DestinationCalendar]:
    destinations = DestinationCalendar.objects.select_related("calendar__connection")
    if not user.is_system_admin:
        destinations = destinations.filter(user=user)
    if user_ids is not None:
        destinations = destinations.filter(user_id__in=user_ids)
    return destinations.order_by("id")


def booking_reference_list(*, user, user_ids: list[int] | None = None) -> QuerySet[BookingReference]:
    """The references of the bookings the caller organises (a system admin: all)."""
    references = BookingReference.objects.all()
    if not user.is_system_admin:
        references = references.filter(booking__organizer=user)
    if user_ids is not None:
        references = references.filter(booking__organizer_id__in=user_ids)
    return references.order_by("id")
