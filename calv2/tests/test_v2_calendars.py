# ruff: noqa: F811 (the calendars app's server fixtures, imported by name)
"""Connected calendars through Cal.com's v2 shapes, against a real CalDAV server (Radicale) and a
real feed server on loopback: connect, list, select, choose the destination, busy times, check,
disconnect, booking references; secrets never in an answer; scopes and visibility."""

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from accounts.tests.factories import AccessTokenFactory, UserFactory
from calendars.models import BusyTime, CalendarConnection, ExternalCalendar
from calendars.services import connection_refresh
from calendars.writes import apply_writes
from calv2.tests.helpers import V2Client, assert_error, event_type_of
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

UTC = ZoneInfo("UTC")


def day_ahead(days: int = 9) -> date:
    today = timezone.now().date()
    monday = today + timedelta(days=(7 - today.weekday()) % 7 + 7)
    return monday + timedelta(days=days % 5)


def feed(day: date) -> bytes:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\nX-WR-CALNAME:Team holidays\r\n"
        "BEGIN:VEVENT\r\nUID:flight\r\nDTSTAMP:20260101T000000Z\r\n"
        f"DTSTART:{day:%Y%m%d}T100000Z\r\nDTEND:{day:%Y%m%d}T120000Z\r\nSUMMARY:Flight\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()


@pytest.fixture
def host():
    return UserFactory(time_zone="UTC")


@pytest.fixture
def v2(api_client, host):
    return V2Client(api_client, host)


def connect_caldav(v2, caldav_account):
    url, username, password = caldav_account
    return v2.call("POST", "/v2/calendars/caldav/credentials", {"url": url, "username": username, "password": password})


def test_connect_caldav_lists_its_calendars_selected_with_a_destination_and_no_secret(
    v2, caldav_account, make_calendar
):
    make_calendar(name="Work")
    response = connect_caldav(v2, caldav_account)
    assert response.status_code == 201, response.content
    answer = v2.call("GET", "/v2/calendars")
    assert answer.status_code == 200
    data = answer.json()["data"]
    [connected] = data["connectedCalendars"]
    assert connected["integration"]["type"] == "caldav_calendar"
    assert [(c["name"], c["isSelected"]) for c in connected["calendars"]] == [("Work", True)]
    assert data["destinationCalendar"]["externalId"] == connected["calendars"][0]["externalId"]
    assert caldav_account[2] not in answer.content.decode()
    assert connected["health"]["healthy"] is False  # not read yet: the worker reads it after connect


def test_apple_credentials_go_to_icloud_and_an_unknown_calendar_is_a_400(v2, host):
    response = v2.call("POST", "/v2/calendars/google/credentials", {"username": "a", "password": "b"})
    assert_error(response, 400, "BadRequestException")
    assert not CalendarConnection.objects.exists()


def test_a_caldav_connection_without_url_is_a_400_and_stores_nothing(v2):
    response = v2.call("POST", "/v2/calendars/caldav/credentials", {"username": "a", "password": "b"})
    assert_error(response, 400, "BadRequestException")
    assert not CalendarConnection.objects.exists()


def test_an_ics_feed_blocks_slots_and_shows_in_busy_times(v2, host, feed_server):
    day = day_ahead()
    feed_server.feeds["/holidays.ics"] = feed(day)
    response = v2.call("POST", "/v2/calendars/ics-feed/save", {"urls": [feed_server.url("/holidays.ics")]})
    assert response.status_code == 201, response.content
    credential = response.json()["data"]
    assert credential["type"] == "ics-feed_calendar"
    # Not read by a worker yet: the check reads it now (a short deadline), then answers.
    assert v2.call("GET", "/v2/calendars/ics-feed/check").status_code == 200
    assert CalendarConnection.objects.get(pk=credential["id"]).last_success_at is not None

    busy = v2.call("GET", f"/v2/calendars/busy-times?dateFrom={day}&dateTo={day}&timeZone=UTC")
    assert busy.status_code == 200, busy.content
    assert [(b["start"], b["end"]) for b in busy.json()["data"]] == [(f"{day}T10:00:00+00:00", f"{day}T12:00:00+00:00")]
    event_type = event_type_of(host, length=60)
    query = f"eventTypeId={event_type.pk}&start={day}&end={day}&timeZone=UTC"
    slots = v2.call("GET", f"/v2/slots?{query}", version="2024-09-04").json()["data"][day.isoformat()]
    assert [slot["start"][11:16] for slot in slots] == ["09:00", "12:00", "13:00", "14:00", "15:00", "16:00"]
    # The feed unchanged: one conditional GET, answered 304.
    assert connection_refresh(connection=CalendarConnection.objects.get(pk=credential["id"]))
    assert feed_server.requests[-1]["if_none_match"] is not None
    # The feed's URL is its secret: never in an answer.
    listed = v2.call("GET", "/v2/calendars").content.decode()
    assert "holidays.ics" not in listed, listed


def test_a_check_of_a_feed_that_fails_is_a_400_naming_why(v2, feed_server):
    feed_server.feeds["/flaky.ics"] = feed(day_ahead())
    v2.call("POST", "/v2/calendars/ics-feed/save", {"urls": [feed_server.url("/flaky.ics")]})
    del feed_server.feeds["/flaky.ics"]
    body = assert_error(v2.call("GET", "/v2/calendars/ics-feed/check"), 400, "BadRequestException")
    assert "HTTP 404" in body["error"]["message"]
    assert_error(v2.call("GET", "/v2/calendars/apple/check"), 400, "BadRequestException")


def test_busy_times_need_a_time_zone(v2):
    day = day_ahead()
    assert_error(v2.call("GET", f"/v2/calendars/busy-times?dateFrom={day}&dateTo={day}"), 400, "BadRequestException")


def test_unselecting_a_calendar_frees_its_busy_time_and_selecting_it_again(v2, host, feed_server):
    day = day_ahead()
    feed_server.feeds["/team.ics"] = feed(day)
    credential = v2.call("POST", "/v2/calendars/ics-feed/save", {"urls": [feed_server.url("/team.ics")]}).json()["data"]
    assert connection_refresh(connection=CalendarConnection.objects.get(pk=credential["id"]))
    calendar = ExternalCalendar.objects.get()
    query = f"integration=ics-feed_calendar&externalId={calendar.external_id}&credentialId={credential['id']}"
    response = v2.call("DELETE", f"/v2/selected-calendars?{query}")
    assert response.status_code == 200, response.content
    assert response.json()["data"]["externalId"] == calendar.external_id
    assert not BusyTime.objects.exists()
    body = {"integration": "ics-feed_calendar", "externalId": calendar.external_id, "credentialId": credential["id"]}
    assert v2.call("POST", "/v2/selected-calendars", body).status_code == 201
    calendar.refresh_from_db()
    assert calendar.is_selected


def test_an_ics_feed_cannot_be_the_destination(v2, feed_server):
    feed_server.feeds["/ro.ics"] = feed(day_ahead())
    v2.call("POST", "/v2/calendars/ics-feed/save", {"urls": [feed_server.url("/ro.ics")]})
    calendar = ExternalCalendar.objects.get()
    response = v2.call(
        "PUT", "/v2/destination-calendars", {"integration": "ics-feed_calendar", "externalId": calendar.external_id}
    )
    assert_error(response, 409, "ConflictException")


def test_another_users_calendar_is_a_404_and_unchanged(v2, api_client, feed_server):
    feed_server.feeds["/other.ics"] = feed(day_ahead())
    other = V2Client(api_client, UserFactory())
    credential = other.call("POST", "/v2/calendars/ics-feed/save", {"urls": [feed_server.url("/other.ics")]}).json()
    calendar = ExternalCalendar.objects.get()
    body = {
        "integration": "ics-feed_calendar",
        "externalId": calendar.external_id,
        "credentialId": credential["data"]["id"],
    }
    assert_error(v2.call("POST", "/v2/selected-calendars", body), 404, "NotFoundException")
    assert_error(
        v2.call("POST", "/v2/calendars/ics-feed/disconnect", {"id": credential["data"]["id"]}), 404, "NotFoundException"
    )
    assert CalendarConnection.objects.count() == 1
    assert v2.call("GET", "/v2/calendars").json()["data"]["connectedCalendars"] == []


def test_disconnect_forgets_the_connection(v2, feed_server):
    feed_server.feeds["/gone.ics"] = feed(day_ahead())
    credential = v2.call("POST", "/v2/calendars/ics-feed/save", {"urls": [feed_server.url("/gone.ics")]}).json()["data"]
    response = v2.call("POST", "/v2/calendars/ics-feed/disconnect", {"id": credential["id"]})
    assert response.status_code == 200, response.content
    assert response.json()["data"]["id"] == credential["id"]
    assert not CalendarConnection.objects.exists()


def test_an_oauth_token_needs_a_calendar_scope(api_client, host):
    token = AccessTokenFactory(user=host, scope="READ_BOOKING")
    response = api_client.get("/v2/calendars", **bearer(token.token))
    assert response.status_code == 403
    token = AccessTokenFactory(user=host, scope="READ_CALENDAR")
    assert api_client.get("/v2/calendars", **bearer(token.token)).status_code == 200
    response = api_client.post(
        "/v2/calendars/ics-feed/save", {"urls": ["https://example.org/a.ics"]}, format="json", **bearer(token.token)
    )
    assert response.status_code == 403
    assert not CalendarConnection.objects.exists()


def test_booking_references_name_the_written_event(v2, host, caldav_account, make_calendar):
    make_calendar(name="Bookings")
    assert connect_caldav(v2, caldav_account).status_code == 201
    event_type = event_type_of(host, length=30)
    start = datetime.combine(day_ahead(), datetime.min.time(), tzinfo=UTC) + timedelta(hours=10)
    body = {
        "start": start.isoformat().replace("+00:00", "Z"),
        "eventTypeId": event_type.pk,
        "attendee": {"name": "Grace Hopper", "email": "grace@example.org", "timeZone": "UTC"},
    }
    booking = v2.call("POST", "/v2/bookings", body, version="2024-08-13")
    assert booking.status_code == 201, booking.content
    data = booking.json()["data"]
    assert apply_writes(data["id"])
    references = v2.call("GET", f"/v2/bookings/{data['uid']}/references")
    assert references.status_code == 200, references.content
    [reference] = references.json()["data"]
    assert reference["type"] == "caldav_calendar"
    assert reference["eventUid"] == f"{data['uid']}@Cal.com"
    assert_error(v2.call("GET", "/v2/bookings/not-a-booking/references"), 404, "NotFoundException")
