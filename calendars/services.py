"""Every write of connected calendars: connect, choose calendars, disconnect, and re-read busy time.
The API, the admin and the worker's tasks call these."""

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from calendars import crypto
from calendars.conf import calendar_setting
from calendars.dispatch import enqueue_refresh
from calendars.models import (
    OAUTH_KINDS,
    BookingReference,
    BusyTime,
    CalendarConnection,
    ConnectionKind,
    DestinationCalendar,
    ExternalCalendar,
)
from calendars.oauth import read_busy
from calendars.providers import (
    ProviderError,
    caldav_busy,
    caldav_discover,
    check_url,
    feed_busy,
    feed_name,
    feed_zone,
    fetch_feed,
    public_label,
)
from calendars.sources import bookings
from core.exceptions import ApplicationError, Conflict, NotFound

logger = logging.getLogger(__name__)

APPLE_CALDAV_URL = "https://caldav.icloud.com/"


def _refused(error: ProviderError, field: str) -> ApplicationError:
    return ApplicationError(str(error), errors={field: [str(error)]})


def ensure_destination(user, calendars: list[ExternalCalendar]) -> None:
    writable = [calendar for calendar in calendars if not calendar.read_only]
    if writable and not DestinationCalendar.objects.filter(user=user).exists():
        DestinationCalendar.objects.create(user=user, calendar=writable[0])


@transaction.atomic
def connect_caldav(*, user, kind: str, url: str, username: str, password: str) -> CalendarConnection:
    """Connect a CalDAV account: the server is asked for the account's calendars first, so that a
    wrong URL or password is a 400 now rather than an unhealthy connection later. Every calendar
    found is selected (blocks slots); the first becomes the destination if the user has none."""
    url = APPLE_CALDAV_URL if kind == ConnectionKind.APPLE else url
    try:
        check_url(url)
        found = caldav_discover(url, username, password)
    except ProviderError as error:
        raise _refused(error, "url") from None
    if not found:
        raise ApplicationError("The account has no calendars.", errors={"url": ["The account has no calendars."]})
    connection = CalendarConnection.objects.create(
        user=user,
        kind=kind,
        label=public_label(url, username),
        credentials=crypto.encrypt({"url": url, "username": username, "password": password}),
    )
    calendars = ExternalCalendar.objects.bulk_create(
        ExternalCalendar(
            connection=connection,
            external_id=calendar.external_id,
            name=calendar.name[:300],
            time_zone=calendar.time_zone or user.time_zone,
            read_only=calendar.read_only,
        )
        for calendar in found
    )
    ensure_destination(user, calendars)
    enqueue_refresh(connection.pk)
    return connection


@transaction.atomic
def connect_ics_feed(*, user, url: str, read_only: bool = True) -> CalendarConnection:
    """Subscribe to a feed (read-only busy time). It is fetched once now, so that a URL that does
    not answer iCalendar is a 400."""
    try:
        answer = fetch_feed(url)
        name, zone = feed_name(answer.data), feed_zone(answer.data)
        start, end = _window()
        feed_busy(answer.data, start=start, end=end, time_zone=zone or user.time_zone)  # bounded, as every read
    except ProviderError as error:
        raise _refused(error, "urls") from None
    connection = CalendarConnection.objects.create(
        user=user, kind=ConnectionKind.ICS, label=public_label(url), credentials=crypto.encrypt({"url": url})
    )
    ExternalCalendar.objects.create(
        connection=connection,
        external_id=f"ics-feed-{connection.pk}",
        name=name or public_label(url),
        time_zone=zone or user.time_zone,
        read_only=True,
    )
    enqueue_refresh(connection.pk)
    return connection


@transaction.atomic
def calendar_select(*, calendar: ExternalCalendar, selected: bool) -> ExternalCalendar:
    """A selected calendar's busy time blocks slots; unselecting drops its cached busy time now."""
    if calendar.is_selected != selected:
        calendar.is_selected = selected
        calendar.save(update_fields=["is_selected"])
        if selected:
            enqueue_refresh(calendar.connection_id)
        else:
            BusyTime.objects.filter(calendar=calendar).delete()
    return calendar


@transaction.atomic
def destination_set(*, user, calendar: ExternalCalendar) -> DestinationCalendar:
    if calendar.read_only or calendar.connection.kind == ConnectionKind.ICS:
        raise Conflict("An ICS feed is read-only: bookings cannot be written into it.")
    destination, _ = DestinationCalendar.objects.update_or_create(user=user, defaults={"calendar": calendar})
    return destination


@transaction.atomic
def destination_delete(*, destination: DestinationCalendar) -> None:
    destination.delete()


@transaction.atomic
def connection_disconnect(*, connection: CalendarConnection) -> None:
    """Forget the connection, its calendars and their busy time. Events already written stay on the
    server (their booking references keep the event's UID)."""
    connection.delete()


def _window():
    now = timezone.now()
    return (
        now - timedelta(days=calendar_setting("WINDOW_PAST_DAYS")),
        now + timedelta(days=calendar_setting("WINDOW_FUTURE_DAYS")),
    )


def connection_refresh(*, connection: CalendarConnection, timeout: float | None = None) -> bool:
    """Read the busy time of the connection's selected calendars and replace the cache with it.
    A failure keeps the last known busy time and records why (shown as unhealthy). True if read.
    `timeout`: each request's, when shorter than CALENDARS["TIMEOUT_SECONDS"] (on demand)."""
    start, end = _window()
    attempt_at = timezone.now()
    calendars = [calendar for calendar in connection.calendars.all() if calendar.is_selected]
    try:
        secret = crypto.decrypt(connection.credentials)
        read: dict[int, list] = {}
        etag = connection.etag
        if connection.kind == ConnectionKind.ICS:
            answer = fetch_feed(secret["url"], etag=connection.etag, timeout=timeout)
            etag = answer.etag
            if answer.data is not None:
                for calendar in calendars:
                    read[calendar.pk] = feed_busy(answer.data, start=start, end=end, time_zone=calendar.time_zone)
        elif connection.kind in OAUTH_KINDS:
            read = read_busy(connection, calendars, start=start, end=end, timeout=timeout)
        else:
            for calendar in calendars:
                read[calendar.pk] = caldav_busy(
                    secret, calendar.external_id, start=start, end=end, time_zone=calendar.time_zone, timeout=timeout
                )
    except (ProviderError, crypto.CredentialsUnreadable) as error:
        CalendarConnection.objects.filter(pk=connection.pk).update(
            last_attempt_at=attempt_at, last_error=str(error)[:500]
        )
        logger.info("Calendar connection %s could not be read: %s", connection.pk, error)
        return False
    with transaction.atomic():
        for calendar_id, periods in read.items():
            BusyTime.objects.filter(calendar_id=calendar_id).delete()
            BusyTime.objects.bulk_create(
                BusyTime(user_id=connection.user_id, calendar_id=calendar_id, start=p.start, end=p.end, event_uid=p.uid)
                for p in periods
            )
        CalendarConnection.objects.filter(pk=connection.pk).update(
            last_attempt_at=attempt_at, last_success_at=attempt_at, last_error="", etag=etag[:300], invalid=False
        )
    return True


def connections_refresh_now(*, user, kind: str | None = None) -> None:
    """Read the user's connections (of one kind) now, each request bounded by the short
    CALENDARS["ON_DEMAND_TIMEOUT_SECONDS"]: what a check asks for. Slots never call this."""
    connections = CalendarConnection.objects.filter(user=user).prefetch_related("calendars")
    if kind is not None:
        connections = connections.filter(kind=kind)
    for connection in connections:
        connection_refresh(connection=connection, timeout=calendar_setting("ON_DEMAND_TIMEOUT_SECONDS"))


def connections_due(now=None) -> list[int]:
    """Connections whose last read is older than the refresh interval."""
    now = now or timezone.now()
    threshold = now - timedelta(seconds=calendar_setting("REFRESH_INTERVAL_SECONDS"))
    return list(
        CalendarConnection.objects.filter(Q(last_attempt_at__isnull=True) | Q(last_attempt_at__lte=threshold))
        .order_by("last_attempt_at")
        .values_list("pk", flat=True)
    )


@transaction.atomic
def booking_reference_create(*, actor, booking_id: int, **fields) -> BookingReference:
    """A reference another system wrote for one of the caller's bookings (Cal.com v1 lets apps
    record them); the booking must be the caller's (a system admin: any)."""
    organizer_id = bookings().booking_organizer_id(booking_id)
    if organizer_id is None or (organizer_id != actor.pk and not actor.is_system_admin):
        raise NotFound(f"Booking {booking_id} not found.")
    reference = BookingReference(booking_id=booking_id, **fields)
    reference.full_clean()
    reference.save()
    return reference


@transaction.atomic
def booking_reference_update(*, reference: BookingReference, **fields) -> BookingReference:
    for name, value in fields.items():
        setattr(reference, name, value)
    reference.full_clean()
    reference.save()
    return reference


@transaction.atomic
def booking_reference_delete(*, reference: BookingReference) -> None:
    reference.delete()
