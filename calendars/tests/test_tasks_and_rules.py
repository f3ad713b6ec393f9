"""The worker's side (beat's sweep, run by a real eager Celery app) and the rules a connected
calendar adds to bookings: a confirm into busy time is a 409, and slots never wait on a server."""

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from celery import current_app
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from calendars.models import BusyTime, CalendarConnection, CalendarWrite, ConnectionKind
from calendars.services import connect_caldav, connect_ics_feed, connection_refresh
from calendars.tasks import refresh_due
from calendars.tests.factories import BookingReferenceFactory, CalendarConnectionFactory, ExternalCalendarFactory
from core.exceptions import Conflict
from scheduling.models import BookingStatus
from scheduling.services.bookings import booking_confirm
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


def monday_ahead() -> datetime:
    today = timezone.now().astimezone(BERLIN).date()
    day = today + timedelta(days=(7 - today.weekday()) % 7 + 14)
    return datetime.combine(day, time(0), tzinfo=BERLIN)


def feed_with(start: datetime, end: datetime) -> bytes:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\nBEGIN:VEVENT\r\nUID:busy\r\n"
        f"DTSTAMP:20260101T000000Z\r\nDTSTART:{start.astimezone(ZoneInfo('UTC')):%Y%m%dT%H%M%SZ}\r\n"
        f"DTEND:{end.astimezone(ZoneInfo('UTC')):%Y%m%dT%H%M%SZ}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()


@pytest.fixture
def eager():
    """Tasks run in the calling process, as a worker would run them (no broker in between)."""
    before = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    yield
    current_app.conf.task_always_eager = before


def test_beat_sweep_reads_due_connections_and_sends_due_writes(eager, feed_server, caldav_account, make_calendar):
    host = UserFactory(time_zone="Europe/Berlin")
    monday = monday_ahead()
    feed_server.feeds["/due.ics"] = feed_with(monday + timedelta(hours=10), monday + timedelta(hours=11))
    feed = connect_ics_feed(user=host, url=feed_server.url("/due.ics"))
    make_calendar(name="Bookings")
    url, username, password = caldav_account
    connect_caldav(user=host, kind=ConnectionKind.CALDAV, url=url, username=username, password=password)
    booking = BookingFactory(
        organizer=host, start_time=monday + timedelta(hours=14), end_time=monday + timedelta(hours=15)
    )
    CalendarWrite.objects.create(booking=booking, action="put", due_at=timezone.now())

    refresh_due.delay()

    feed.refresh_from_db()
    assert feed.last_success_at is not None
    assert BusyTime.objects.filter(calendar__connection=feed).count() == 1
    assert CalendarWrite.objects.get().done_at is not None
    assert CalendarConnection.objects.filter(last_attempt_at__isnull=True).count() == 0


def test_confirming_a_pending_booking_into_busy_time_is_a_409_and_changes_nothing(feed_server):
    host = UserFactory(time_zone="Europe/Berlin")
    start = monday_ahead() + timedelta(hours=10)
    pending = BookingFactory(
        organizer=host, start_time=start, end_time=start + timedelta(hours=1), status=BookingStatus.PENDING
    )
    feed_server.feeds["/later.ics"] = feed_with(start, start + timedelta(minutes=30))
    assert connection_refresh(connection=connect_ics_feed(user=host, url=feed_server.url("/later.ics")))
    with pytest.raises(Conflict):
        booking_confirm(booking=pending)
    pending.refresh_from_db()
    assert pending.status == BookingStatus.PENDING


def test_slots_answer_from_the_cache_while_the_calendar_server_is_down(api_client, feed_server):
    host = UserFactory(time_zone="Europe/Berlin")
    monday = monday_ahead()
    feed_server.feeds["/down.ics"] = feed_with(monday + timedelta(hours=10), monday + timedelta(hours=12))
    connection = connect_ics_feed(user=host, url=feed_server.url("/down.ics"))
    assert connection_refresh(connection=connection)
    del feed_server.feeds["/down.ics"]  # the feed is gone: reads fail from now on
    connection.refresh_from_db()
    assert connection_refresh(connection=connection) is False
    event_type = EventTypeFactory(owner=host, length=60)
    key = ApiKeyFactory(user=host).raw_key
    day = monday.date()
    query = f"eventTypeId={event_type.pk}&startTime={day}&endTime={day}&timeZone=Europe/Berlin"
    response = api_client.get(f"/v1/slots?{query}", **bearer(key))
    assert response.status_code == 200
    assert [int(slot["time"][11:13]) for slot in response.json()["slots"][day.isoformat()]] == [9, 12, 13, 14, 15, 16]


def test_slots_read_two_connected_calendars_in_their_own_busy_time_statement(api_client):
    """The cached busy time of two connected calendars (a CalDAV calendar and an ICS feed) is read
    in the statement that reads the host's bookings: GET /v1/slots asks no more statements with
    them than without, and every period blocks (the service's own event excepted)."""
    host = UserFactory(time_zone="Europe/Berlin")
    event_type = EventTypeFactory(owner=host, length=60)
    key = ApiKeyFactory(user=host).raw_key
    monday = monday_ahead()
    day = monday.date()
    path = f"/v1/slots?eventTypeId={event_type.pk}&startTime={day}&endTime={day}&timeZone=Europe/Berlin"

    def slots() -> tuple[list[int], int]:
        with CaptureQueriesContext(connection) as context:
            response = api_client.get(path, **bearer(key))
        assert response.status_code == 200
        hours = [int(slot["time"][11:13]) for slot in response.json()["slots"].get(day.isoformat(), [])]
        return hours, len(context.captured_queries)

    slots()  # the key's once-a-minute lastUsedAt write, and the per-process caches
    free, statements = slots()
    assert free == [9, 10, 11, 12, 13, 14, 15, 16]

    for kind, periods in (
        (ConnectionKind.CALDAV, [(10, 0, 10, 30), (15, 45, 16, 15), (20, 0, 21, 0)]),
        (ConnectionKind.ICS, [(12, 0, 13, 0), (10, 15, 10, 45)]),
    ):
        calendar = ExternalCalendarFactory(connection=CalendarConnectionFactory(user=host, kind=kind))
        for index, (start_hour, start_minute, end_hour, end_minute) in enumerate(periods):
            BusyTime.objects.create(
                user=host,
                calendar=calendar,
                start=monday + timedelta(hours=start_hour, minutes=start_minute),
                end=monday + timedelta(hours=end_hour, minutes=end_minute),
                event_uid=f"{kind}-{index}",
            )
    # The service's own event, read back from the calendar: it never blocks.
    last_week = monday - timedelta(days=7)
    own = BookingFactory(organizer=host, start_time=last_week, end_time=last_week + timedelta(hours=1))
    BookingReferenceFactory(booking=own, uid="own-event")
    BusyTime.objects.create(
        user=host,
        calendar=calendar,
        start=monday + timedelta(hours=9),
        end=monday + timedelta(hours=9, minutes=30),
        event_uid="own-event",
    )

    busy, statements_with_calendars = slots()
    assert busy == [9, 11, 13, 14]
    assert statements_with_calendars == statements
