"""Busy time read from a real CalDAV server (Radicale on loopback): the hard cases of iCalendar
read correctly, cached in PostgreSQL, and blocking slots and bookings like a booking."""

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from calendars.models import BusyTime, CalendarConnection, ConnectionKind
from calendars.selectors import calendar_busy, is_healthy
from calendars.services import connect_caldav, connection_refresh
from core.exceptions import ApplicationError
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def stamp(day: date, hour: int = 0, minute: int = 0) -> str:
    return f"{day:%Y%m%d}T{hour:02d}{minute:02d}00"


def vcalendar(*body: str) -> str:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\n" + "".join(body) + "END:VCALENDAR\r\n"


def vevent(uid: str, *lines: str) -> str:
    return (
        "BEGIN:VEVENT\r\n"
        + f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\n"
        + "".join(f"{line}\r\n" for line in lines)
        + "END:VEVENT\r\n"
    )


@pytest.fixture
def host():
    return UserFactory(time_zone="Europe/Berlin")


def connect(host, caldav_account) -> CalendarConnection:
    url, username, password = caldav_account
    connection = connect_caldav(user=host, kind=ConnectionKind.CALDAV, url=url, username=username, password=password)
    assert connection_refresh(connection=connection)
    return connection


def busy_in_berlin(host, day: date, days: int = 7) -> list[tuple[str, str]]:
    start = datetime.combine(day, time(0), tzinfo=BERLIN)
    periods = sorted(calendar_busy(host.pk, start, start + timedelta(days=days)))
    return [(f"{s.astimezone(BERLIN):%a %H:%M}", f"{e.astimezone(BERLIN):%a %H:%M}") for s, e in periods]


def test_recurring_event_with_an_exdate_and_a_moved_instance(host, caldav_account, make_calendar):
    monday = monday_ahead()
    wednesday = monday + timedelta(days=2)
    make_calendar(
        vcalendar(
            vevent(
                "standup",
                f"DTSTART;TZID=Europe/Berlin:{stamp(monday, 10)}",
                f"DTEND;TZID=Europe/Berlin:{stamp(monday, 11)}",
                "RRULE:FREQ=DAILY;COUNT=5",
                f"EXDATE;TZID=Europe/Berlin:{stamp(monday + timedelta(days=1), 10)}",
                "SUMMARY:Stand-up",
            ),
            vevent(
                "standup",
                f"RECURRENCE-ID;TZID=Europe/Berlin:{stamp(wednesday, 10)}",
                f"DTSTART;TZID=Europe/Berlin:{stamp(wednesday, 15)}",
                f"DTEND;TZID=Europe/Berlin:{stamp(wednesday, 16)}",
                "SUMMARY:Stand-up (moved)",
            ),
        )
    )
    connect(host, caldav_account)
    assert busy_in_berlin(host, monday) == [
        ("Mon 10:00", "Mon 11:00"),
        ("Wed 15:00", "Wed 16:00"),
        ("Thu 10:00", "Thu 11:00"),
        ("Fri 10:00", "Fri 11:00"),
    ]


def test_all_day_event_is_busy_for_the_whole_day_in_the_calendars_zone(host, caldav_account, make_calendar):
    thursday = monday_ahead() + timedelta(days=3)
    make_calendar(
        vcalendar(
            vevent(
                "holiday",
                f"DTSTART;VALUE=DATE:{thursday:%Y%m%d}",
                f"DTEND;VALUE=DATE:{thursday + timedelta(days=1):%Y%m%d}",
            )
        )
    )
    connect(host, caldav_account)
    assert busy_in_berlin(host, thursday, days=1) == [("Thu 00:00", "Fri 00:00")]


def test_transparent_and_cancelled_events_and_a_cancelled_instance_do_not_block(host, caldav_account, make_calendar):
    monday = monday_ahead()
    make_calendar(
        vcalendar(
            vevent("free", f"DTSTART;TZID=Europe/Berlin:{stamp(monday, 9)}", "DURATION:PT1H", "TRANSP:TRANSPARENT")
        ),
        vcalendar(
            vevent(
                "called-off", f"DTSTART;TZID=Europe/Berlin:{stamp(monday, 12)}", "DURATION:PT1H", "STATUS:CANCELLED"
            ),
        ),
        vcalendar(
            vevent(
                "weekly",
                f"DTSTART;TZID=Europe/Berlin:{stamp(monday, 14)}",
                "DURATION:PT1H",
                "RRULE:FREQ=DAILY;COUNT=2",
            ),
            vevent(
                "weekly",
                f"RECURRENCE-ID;TZID=Europe/Berlin:{stamp(monday, 14)}",
                f"DTSTART;TZID=Europe/Berlin:{stamp(monday, 14)}",
                "DURATION:PT1H",
                "STATUS:CANCELLED",
            ),
        ),
    )
    connect(host, caldav_account)
    assert busy_in_berlin(host, monday) == [("Tue 14:00", "Tue 15:00")]


def next_march() -> int:
    now = timezone.now()
    return now.year + (1 if now.month >= 3 else 0)


EASTERN_VTIMEZONE = (
    "BEGIN:VTIMEZONE\r\nTZID:Eastern Standard Time\r\n"
    "BEGIN:STANDARD\r\nDTSTART:16011104T020000\r\nRRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=11\r\n"
    "TZOFFSETFROM:-0400\r\nTZOFFSETTO:-0500\r\nEND:STANDARD\r\n"
    "BEGIN:DAYLIGHT\r\nDTSTART:16010311T020000\r\nRRULE:FREQ=YEARLY;BYDAY=2SU;BYMONTH=3\r\n"
    "TZOFFSETFROM:-0500\r\nTZOFFSETTO:-0400\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n"
)


def test_a_vtimezone_of_its_own_holds_the_local_hour_across_dst(host, caldav_account, make_calendar):
    """An Outlook-style zone (not an IANA name, defined by the VTIMEZONE): 09:00 local each Monday
    stays 09:00 local when that zone moves to daylight time."""
    year = next_march()
    first_monday = date(year, 3, 1) + timedelta(days=(7 - date(year, 3, 1).weekday()) % 7)
    make_calendar(
        vcalendar(
            EASTERN_VTIMEZONE,
            vevent(
                "weekly-ny",
                f"DTSTART;TZID=Eastern Standard Time:{stamp(first_monday, 9)}",
                f"DTEND;TZID=Eastern Standard Time:{stamp(first_monday, 10)}",
                "RRULE:FREQ=WEEKLY;COUNT=4",
            ),
        )
    )
    connect(host, caldav_account)
    start = datetime.combine(first_monday, time(0), tzinfo=UTC)
    new_york = ZoneInfo("America/New_York")
    periods = sorted(calendar_busy(host.pk, start, start + timedelta(days=28)))
    assert [s.astimezone(new_york).strftime("%m-%d %H:%M") for s, _ in periods] == [
        (first_monday + timedelta(weeks=week)).strftime("%m-%d 09:00") for week in range(4)
    ]
    offsets = {s.astimezone(new_york).utcoffset() for s, _ in periods}
    assert offsets == {timedelta(hours=-5), timedelta(hours=-4)}


def test_floating_time_is_read_in_the_calendars_zone(host, caldav_account, make_calendar):
    monday = monday_ahead()
    make_calendar(vcalendar(vevent("floating", f"DTSTART:{stamp(monday, 12)}", f"DTEND:{stamp(monday, 13)}")))
    connect(host, caldav_account)
    assert busy_in_berlin(host, monday, days=1) == [("Mon 12:00", "Mon 13:00")]


def test_busy_time_removes_slots_and_a_booking_into_it_is_a_409(api_client, host, caldav_account, make_calendar):
    monday = monday_ahead()
    make_calendar(vcalendar(vevent("dentist", f"DTSTART;TZID=Europe/Berlin:{stamp(monday, 10)}", "DURATION:PT2H")))
    connect(host, caldav_account)
    event_type = EventTypeFactory(owner=host, length=60)
    key = ApiKeyFactory(user=host).raw_key
    query = f"eventTypeId={event_type.pk}&startTime={monday}&endTime={monday}&timeZone=Europe/Berlin"
    slots = api_client.get(f"/v1/slots?{query}", **bearer(key)).json()["slots"][monday.isoformat()]
    assert [int(slot["time"][11:13]) for slot in slots] == [9, 12, 13, 14, 15, 16]
    body = {
        "eventTypeId": event_type.pk,
        "start": datetime.combine(monday, time(11), tzinfo=BERLIN).isoformat(),
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "timeZone": "Europe/Berlin",
    }
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 409, response.json()
    assert not host.bookings.exists()


def test_a_wrong_password_is_refused_at_connect_and_nothing_is_stored(host, caldav_account):
    url, username, _ = caldav_account
    with pytest.raises(ApplicationError) as refused:
        connect_caldav(user=host, kind=ConnectionKind.CALDAV, url=url, username=username, password="wrong")
    assert "refused the username or password" in str(refused.value.detail)
    assert not CalendarConnection.objects.exists()


def test_an_unreachable_server_keeps_the_last_busy_time_and_shows_unhealthy(host, caldav_account, make_calendar):
    monday = monday_ahead()
    make_calendar(vcalendar(vevent("kept", f"DTSTART;TZID=Europe/Berlin:{stamp(monday, 10)}", "DURATION:PT1H")))
    connection = connect(host, caldav_account)
    connection.refresh_from_db()
    assert is_healthy(connection)
    CalendarConnection.objects.filter(pk=connection.pk).update(credentials=connection.credentials)
    from calendars import crypto

    secret = crypto.decrypt(connection.credentials)
    connection.credentials = crypto.encrypt({**secret, "url": "http://127.0.0.1:9/"})  # nothing listens on port 9
    connection.save(update_fields=["credentials"])
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert not is_healthy(connection)
    assert connection.last_error.startswith("The calendar server could not be read")
    assert BusyTime.objects.filter(calendar__connection=connection).count() == 1
