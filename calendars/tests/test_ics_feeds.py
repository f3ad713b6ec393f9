"""ICS feeds from a real HTTP server on loopback: conditional re-fetch, and hostile iCalendar
refused or bounded with a clear error, the last known busy time kept."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.tests.factories import UserFactory
from calendars.models import BusyTime, CalendarConnection
from calendars.selectors import is_healthy
from calendars.services import connect_ics_feed, connection_refresh
from core.exceptions import ApplicationError

pytestmark = pytest.mark.django_db


def calendar(*events: str) -> bytes:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\n" + "".join(events) + "END:VCALENDAR\r\n"
    ).encode()


def event(uid: str, *lines: str) -> str:
    body = "".join(f"{line}\r\n" for line in (f"UID:{uid}", "DTSTAMP:20260101T000000Z", *lines))
    return f"BEGIN:VEVENT\r\n{body}END:VEVENT\r\n"


def soon(days: int = 3) -> str:
    return f"{(timezone.now() + timedelta(days=days)):%Y%m%d}"


@pytest.fixture
def connected(feed_server):
    """A feed with one event, connected and read."""
    path = f"/feed-{id(object())}.ics"
    feed_server.feeds[path] = calendar(event("one", f"DTSTART:{soon()}T100000Z", f"DTEND:{soon()}T110000Z"))
    connection = connect_ics_feed(user=UserFactory(), url=feed_server.url(path))
    assert connection_refresh(connection=connection)
    return connection, path


def test_an_unchanged_feed_costs_a_304_and_a_change_is_read(feed_server, connected):
    connection, path = connected
    connection.refresh_from_db()
    assert connection_refresh(connection=connection)
    assert feed_server.requests[-1]["if_none_match"] == connection.etag
    assert BusyTime.objects.count() == 1
    feed_server.feeds[path] = calendar(
        event("one", f"DTSTART:{soon()}T100000Z", f"DTEND:{soon()}T110000Z"),
        event("two", f"DTSTART:{soon()}T140000Z", f"DTEND:{soon()}T150000Z"),
    )
    connection.refresh_from_db()
    assert connection_refresh(connection=connection)
    assert BusyTime.objects.count() == 2


@pytest.mark.parametrize(
    ("hostile", "message"),
    [
        # An RRULE without end, every second: refused before anything is expanded.
        (
            lambda: calendar(event("storm", f"DTSTART:{soon()}T000000Z", "DURATION:PT1S", "RRULE:FREQ=SECONDLY")),
            "FREQ=SECONDLY",
        ),
        (
            lambda: calendar(
                event("sly", f"DTSTART:{soon()}T000000Z", "DURATION:PT1M", "RRULE:FREQ=HOURLY;BYMINUTE=0,5,10,15,20")
            ),
            "BYMINUTE",
        ),
        # 10^6 instances asked for by COUNT, and many RRULEs without end: the instance bound.
        (
            lambda: calendar(
                event("many", f"DTSTART:{soon()}T000000Z", "DURATION:PT1M", "RRULE:FREQ=HOURLY;COUNT=1000000")
            ),
            "more than 500 event instances",
        ),
        (
            lambda: calendar(
                *(event(f"d{n}", f"DTSTART:{soon()}T0{n}0000Z", "DURATION:PT5M", "RRULE:FREQ=DAILY") for n in range(4))
            ),
            "more than 500 event instances",
        ),
        # More bytes than an answer may have.
        (
            lambda: calendar(event("huge", f"DTSTART:{soon()}T100000Z", "DESCRIPTION:" + "x" * (6 * 1024 * 1024))),
            "bytes",
        ),
        # Components nested without end.
        (lambda: b"BEGIN:VCALENDAR\r\n" + b"BEGIN:VEVENT\r\n" * 60000, "components"),
        # Not iCalendar at all.
        (lambda: b"<html>Sign in to see this calendar</html>", "not valid iCalendar"),
    ],
    ids=["secondly", "hourly-by-minute", "a-million-instances", "endless-dailies", "huge", "deep", "not-icalendar"],
)
def test_hostile_feeds_are_refused_with_a_clear_error_and_the_last_busy_time_is_kept(
    settings, feed_server, connected, hostile, message
):
    # A lower bound than the default keeps the test short; the default bounds the same way.
    settings.CALENDARS = {**settings.CALENDARS, "MAX_INSTANCES": 500}
    connection, path = connected
    feed_server.feeds[path] = hostile()
    connection.refresh_from_db()
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert message in connection.last_error
    assert not is_healthy(connection)
    assert BusyTime.objects.filter(calendar__connection=connection).count() == 1


def test_a_hostile_feed_is_refused_at_connect_and_nothing_is_stored(settings, feed_server):
    settings.CALENDARS = {**settings.CALENDARS, "MAX_INSTANCES": 500}
    feed_server.feeds["/storm.ics"] = calendar(
        event("storm", f"DTSTART:{soon()}T000000Z", "DURATION:PT1S", "RRULE:FREQ=SECONDLY")
    )
    with pytest.raises(ApplicationError):
        connect_ics_feed(user=UserFactory(), url=feed_server.url("/storm.ics"))
    assert not CalendarConnection.objects.exists()


def test_a_feed_that_answers_404_is_refused_at_connect(feed_server):
    with pytest.raises(ApplicationError) as refused:
        connect_ics_feed(user=UserFactory(), url=feed_server.url("/missing.ics"))
    assert "HTTP 404" in str(refused.value.detail)
    assert not CalendarConnection.objects.exists()


def test_expansion_is_time_bounded(settings, feed_server, connected):
    """With no time to spare, even a modest recurrence is refused by the deadline, not run on."""
    settings.CALENDARS = {**settings.CALENDARS, "EXPAND_SECONDS": 0}
    connection, path = connected
    feed_server.feeds[path] = calendar(event("daily", f"DTSTART:{soon()}T090000Z", "DURATION:PT1H", "RRULE:FREQ=DAILY"))
    connection.refresh_from_db()
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert "to expand" in connection.last_error
