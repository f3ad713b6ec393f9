"""The same reads and writes against Xandikos, a second CalDAV server that differs from Radicale
(its own discovery answers, storage and REPORT handling)."""

import uuid
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import caldav
import icalendar
import pytest
import requests
from django.utils import timezone

from accounts.tests.factories import UserFactory
from calendars.models import ConnectionKind, ExternalCalendar
from calendars.selectors import calendar_busy
from calendars.services import calendar_select, connect_caldav, connection_refresh
from calendars.tests.servers import XandikosServer
from calendars.writes import apply_writes
from scheduling.services.bookings import booking_cancel
from scheduling.tests.factories import BookingFactory

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture(scope="module")
def xandikos(tmp_path_factory):
    server = XandikosServer(tmp_path_factory.mktemp("xandikos"))
    yield server
    server.stop()


def monday_ahead() -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 14)


def stamp(day: date, hour: int) -> str:
    return f"{day:%Y%m%d}T{hour:02d}0000"


def connect_only(host, xandikos, *events: str):
    """A new calendar on the server holding `events`, connected; the other calendars unselected."""
    client = caldav.DAVClient(url=xandikos.url, auth=requests.auth.HTTPBasicAuth("user", "any"))
    calendar = client.principal().make_calendar(name=f"cal-{uuid.uuid4().hex[:8]}")
    for event in events:
        calendar.save_event(event)
    connection = connect_caldav(
        user=host, kind=ConnectionKind.CALDAV, url=xandikos.url, username="user", password="any"
    )
    for other in ExternalCalendar.objects.filter(connection=connection).exclude(external_id=str(calendar.url)):
        calendar_select(calendar=other, selected=False)
    return calendar, connection


def vcalendar(*lines: str) -> str:
    body = "".join(f"{line}\r\n" for line in lines)
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\n{body}END:VCALENDAR\r\n"


def test_recurring_with_exdate_and_a_moved_instance_and_an_all_day_event(xandikos):
    host = UserFactory(time_zone="Europe/Berlin")
    monday = monday_ahead()
    recurring = vcalendar(
        "BEGIN:VEVENT",
        "UID:standup-x",
        "DTSTAMP:20260101T000000Z",
        f"DTSTART;TZID=Europe/Berlin:{stamp(monday, 10)}",
        f"DTEND;TZID=Europe/Berlin:{stamp(monday, 11)}",
        "RRULE:FREQ=DAILY;COUNT=4",
        f"EXDATE;TZID=Europe/Berlin:{stamp(monday + timedelta(days=1), 10)}",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "UID:standup-x",
        "DTSTAMP:20260101T000000Z",
        f"RECURRENCE-ID;TZID=Europe/Berlin:{stamp(monday + timedelta(days=2), 10)}",
        f"DTSTART;TZID=Europe/Berlin:{stamp(monday + timedelta(days=2), 15)}",
        f"DTEND;TZID=Europe/Berlin:{stamp(monday + timedelta(days=2), 16)}",
        "END:VEVENT",
    )
    all_day = vcalendar(
        "BEGIN:VEVENT",
        "UID:holiday-x",
        "DTSTAMP:20260101T000000Z",
        f"DTSTART;VALUE=DATE:{monday + timedelta(days=4):%Y%m%d}",
        f"DTEND;VALUE=DATE:{monday + timedelta(days=5):%Y%m%d}",
        "END:VEVENT",
    )
    _, connection = connect_only(host, xandikos, recurring, all_day)
    assert connection_refresh(connection=connection)
    start = datetime.combine(monday, time(0), tzinfo=BERLIN)
    periods = sorted(calendar_busy(host.pk, start, start + timedelta(days=7)))
    assert [(f"{s.astimezone(BERLIN):%a %H:%M}", f"{e.astimezone(BERLIN):%a %H:%M}") for s, e in periods] == [
        ("Mon 10:00", "Mon 11:00"),
        ("Wed 15:00", "Wed 16:00"),
        ("Thu 10:00", "Thu 11:00"),
        ("Fri 00:00", "Sat 00:00"),
    ]


def test_a_booking_is_written_once_and_removed_on_cancel(xandikos):
    host = UserFactory(time_zone="Europe/Berlin")
    calendar, connection = connect_only(host, xandikos)
    host.destination_calendar.calendar = ExternalCalendar.objects.get(connection=connection, is_selected=True)
    host.destination_calendar.save()
    start = datetime.combine(monday_ahead(), time(11), tzinfo=BERLIN)
    booking = BookingFactory(organizer=host, start_time=start, end_time=start + timedelta(hours=1))
    from calendars.writes import booking_changed

    booking_changed(booking)
    assert apply_writes(booking.pk)
    booking_changed(booking)  # applied twice: still one event
    assert apply_writes(booking.pk)
    events = [e for item in calendar.events() for e in icalendar.Calendar.from_ical(item.data).walk("VEVENT")]
    assert [str(event["UID"]) for event in events] == [f"{booking.uid}@Cal.com"]
    booking_cancel(booking=booking)
    assert apply_writes(booking.pk)
    assert calendar.events() == []
