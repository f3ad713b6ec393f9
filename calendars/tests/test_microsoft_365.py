"""Microsoft 365 through Microsoft Graph's published API, replayed from recorded answers on loopback
(Microsoft cannot be reached from here): connect → callback → calendars listed → busy time (two
pages of calendarView) blocks slots → booking created once (transactionId) → reschedule updates →
cancel deletes; rotating refresh tokens; a revoked grant; a next page elsewhere refused."""

import time
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from calendars import crypto
from calendars.models import BookingReference, CalendarConnection, CalendarWrite, ConnectionKind
from calendars.oauth.microsoft import transaction_id
from calendars.selectors import calendar_busy
from calendars.services import connection_refresh
from calendars.tests.recorded_server import Reply, recorded
from calendars.writes import apply_writes, due_write_bookings
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

GRAPH = "/v1.0"
TOKEN = "/login/common/oauth2/v2.0/token"
DEFAULT = recorded("microsoft/calendars.json")["value"][1]["id"]
HOLIDAYS = recorded("microsoft/calendars.json")["value"][0]["id"]


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def utc(hour: int, day: date | None = None) -> datetime:
    return datetime.combine(day or monday_ahead(), clock(hour), tzinfo=UTC)


def day_values(day: date) -> dict:
    return {
        "day": day.isoformat(),
        "next_day": (day + timedelta(days=1)).isoformat(),
        "day_after": (day + timedelta(days=2)).isoformat(),
    }


@pytest.fixture
def host():
    return UserFactory(time_zone="UTC", name="Grace Hopper")


@pytest.fixture
def key(host):
    return ApiKeyFactory(user=host).raw_key


def record_connect(server) -> None:
    server.reply("POST", TOKEN, Reply(200, recorded("microsoft/token.json")))
    server.reply("GET", f"{GRAPH}/me", Reply(200, recorded("microsoft/me.json")))
    server.reply("GET", f"{GRAPH}/me/calendars", Reply(200, recorded("microsoft/calendars.json")))


def record_view(server, day: date, own_id: str = "not-ours") -> None:
    view = f"{GRAPH}/me/calendars/{DEFAULT}/calendarView"
    next_link = f"{server.url}/v1.0/me/calendars/{DEFAULT}/calendarView?$skiptoken=page2"
    server.reply(
        "GET",
        view,
        Reply(200, recorded("microsoft/calendar_view_page1.json", next=next_link, **day_values(day))),
        Reply(200, recorded("microsoft/calendar_view_page2.json", own_id=own_id, **day_values(day))),
    )
    server.reply(
        "GET",
        f"{GRAPH}/me/calendars/{HOLIDAYS}/calendarView",
        Reply(200, recorded("microsoft/calendar_view_empty.json")),
    )


def connect(api_client, key, server, redir: str = "") -> CalendarConnection:
    record_connect(server)
    query = f"?redir={redir}" if redir else ""
    answer = api_client.get(f"/v2/calendars/office365/connect{query}", **bearer(key)).json()["data"]["authUrl"]
    state = parse_qs(urlsplit(answer).query)["state"][0]
    response = api_client.get("/v2/calendars/office365/save", {"code": "M.C507_recorded", "state": state})
    assert response.status_code in (200, 301), response.content
    return CalendarConnection.objects.get(kind=ConnectionKind.OFFICE365)


def booking_body(host, start: datetime) -> dict:
    """A v1 booking request for a new hour-long event type of the host (weekdays 9-17 UTC)."""
    event_type = EventTypeFactory(owner=host, length=60, schedule=ScheduleFactory(user=host, time_zone="UTC"))
    return {
        "eventTypeId": event_type.pk,
        "start": start.isoformat(),
        "name": "Ada",
        "email": "ada@example.org",
        "timeZone": "UTC",
    }


def sweep() -> None:
    for booking_id in due_write_bookings():
        apply_writes(booking_id)


def test_connect_uses_the_tenants_endpoints_with_pkce(api_client, key, oauth_apps):
    answer = api_client.get("/v2/calendars/office365/connect", **bearer(key))
    assert answer.status_code == 200, answer.content
    url = urlsplit(answer.json()["data"]["authUrl"])
    assert url.path == "/login/common/oauth2/v2.0/authorize"
    query = {name: values[0] for name, values in parse_qs(url.query).items()}
    assert query["scope"].split() == ["offline_access", "User.Read", "Calendars.ReadWrite"]
    assert query["code_challenge_method"] == "S256"
    assert query["redirect_uri"] == "http://testserver/v2/calendars/office365/save"


def test_the_whole_way_connect_busy_book_reschedule_cancel(api_client, key, host, oauth_apps):
    day = monday_ahead()
    connection = connect(api_client, key, oauth_apps, redir="https://app.example.org/done")
    exchange = oauth_apps.sent("POST", TOKEN)[0].form
    assert exchange["grant_type"] == "authorization_code" and exchange["code_verifier"]
    data = api_client.get("/v2/calendars", **bearer(key)).json()["data"]
    [connected] = data["connectedCalendars"]
    assert connected["integration"]["type"] == "office365_calendar"
    # The default calendar first, the destination; the holidays read-only.
    assert [(c["name"], c["readOnly"]) for c in connected["calendars"]] == [
        ("Calendar", False),
        ("United States holidays", True),
    ]
    assert data["destinationCalendar"]["externalId"] == DEFAULT
    assert connection.label == "grace@contoso.example"

    record_view(oauth_apps, day)
    assert connection_refresh(connection=connection)
    first_page = oauth_apps.sent("GET", f"{GRAPH}/me/calendars/{DEFAULT}/calendarView")[0]
    assert first_page.headers["Prefer"] == 'outlook.timezone="UTC"'
    assert first_page.query["startDateTime"].startswith(str(timezone.now().date() - timedelta(days=1)))
    # Busy and out-of-office block (both pages read); free and cancelled do not; all-day is the day.
    assert sorted(calendar_busy(host.pk, utc(0, day), utc(23, day))) == [
        (utc(7, day), utc(8, day)),
        (utc(9, day), utc(10, day)),
        (utc(13, day), utc(14, day)),
    ]
    next_day = day + timedelta(days=1)
    assert calendar_busy(host.pk, utc(1, next_day), utc(2, next_day)) == (
        (utc(0, next_day), utc(0, day + timedelta(days=2))),
    )

    body = booking_body(host, utc(11, day))
    assert (
        api_client.post(
            "/v1/bookings", {**body, "start": utc(9, day).isoformat()}, format="json", **bearer(key)
        ).status_code
        == 409
    )
    booking = api_client.post("/v1/bookings", body, format="json", **bearer(key)).json()
    uid = booking["iCalUID"]
    assert uid == f"{booking['uid']}@Cal.com"
    events = f"{GRAPH}/me/calendars/{DEFAULT}/events"
    created = recorded("microsoft/event.json", event_id="AAMkAGIAAAoZDOKAAA=", transaction="t", start="", end="")
    oauth_apps.reply("POST", events, Reply(201, created))
    sweep()
    [create] = oauth_apps.sent("POST", events)
    assert create.json["transactionId"] == transaction_id(uid)
    assert create.json["start"] == {"dateTime": utc(11, day).replace(tzinfo=None).isoformat(), "timeZone": "UTC"}
    assert "attendees" not in create.json and "ada@example.org" in create.json["body"]["content"]
    reference = BookingReference.objects.get()
    assert (reference.type, reference.href) == ("office365_calendar", "AAMkAGIAAAoZDOKAAA=")

    # Read back under Graph's own iCalUId, the event is known by its id: it does not block.
    record_view(oauth_apps, day, own_id="AAMkAGIAAAoZDOKAAA=")
    assert connection_refresh(connection=connection)
    assert (utc(7, day), utc(8, day)) not in calendar_busy(host.pk, utc(0, day), utc(23, day))

    event = f"{GRAPH}/me/events/AAMkAGIAAAoZDOKAAA="
    oauth_apps.reply("PATCH", event, Reply(200, created))
    moved = api_client.post(
        "/v1/bookings",
        {**body, "start": utc(12, day).isoformat(), "rescheduleUid": booking["uid"]},
        format="json",
        **bearer(key),
    ).json()
    assert moved["iCalUID"] == uid
    sweep()
    assert (
        oauth_apps.sent("PATCH", event)[-1].json["start"]["dateTime"] == utc(12, day).replace(tzinfo=None).isoformat()
    )
    assert len(oauth_apps.sent("POST", events)) == 1

    oauth_apps.reply("DELETE", event, Reply(204))
    assert api_client.delete(f"/v1/bookings/{moved['id']}/cancel?apiKey={key}").status_code == 200
    sweep()
    assert len(oauth_apps.sent("DELETE", event)) == 1
    assert BookingReference.objects.get().deleted is True


def test_an_update_of_an_event_deleted_in_outlook_creates_it_again(api_client, key, host, oauth_apps):
    connect(api_client, key, oauth_apps)
    body = booking_body(host, utc(11))
    booking = api_client.post("/v1/bookings", body, format="json", **bearer(key)).json()
    events = f"{GRAPH}/me/calendars/{DEFAULT}/events"
    oauth_apps.reply(
        "POST",
        events,
        Reply(201, recorded("microsoft/event.json", event_id="first", transaction="t", start="", end="")),
    )
    sweep()
    oauth_apps.reply("PATCH", f"{GRAPH}/me/events/first", Reply(404, recorded("microsoft/error_404.json")))
    oauth_apps.reply(
        "POST",
        events,
        Reply(201, recorded("microsoft/event.json", event_id="second", transaction="t", start="", end="")),
    )
    api_client.post(
        "/v1/bookings",
        {**body, "start": utc(12).isoformat(), "rescheduleUid": booking["uid"]},
        format="json",
        **bearer(key),
    )
    sweep()
    assert BookingReference.objects.get().href == "second"
    # The meeting's UID is kept across the reschedule; the creation again is not a retry of the first.
    first, again = (sent.json["transactionId"] for sent in oauth_apps.sent("POST", events))
    assert first == transaction_id(booking["iCalUID"]) and again not in (first, transaction_id(booking["iCalUID"]))


def test_a_rotated_refresh_token_replaces_the_stored_one(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    connection.credentials = crypto.encrypt({**crypto.decrypt(connection.credentials), "expires_at": time.time()})
    connection.save()
    oauth_apps.reply("POST", TOKEN, Reply(200, recorded("microsoft/token_refreshed.json")))
    record_view(oauth_apps, monday_ahead())
    assert connection_refresh(connection=connection)
    assert oauth_apps.sent("POST", TOKEN)[-1].form["refresh_token"] == "0.AR8AgkRecordedRefreshTokenOne"
    stored = crypto.decrypt(CalendarConnection.objects.get().credentials)
    assert stored["refresh_token"] == "0.AR8AgkRecordedRefreshTokenTwo"
    assert stored["access_token"] == "eyJ0eXAiOiJKV1QiRecordedAccessTokenTwo"


def test_a_revoked_grant_marks_the_connection_invalid(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    connection.credentials = crypto.encrypt({**crypto.decrypt(connection.credentials), "expires_at": 0})
    connection.save()
    oauth_apps.reply("POST", TOKEN, Reply(400, recorded("microsoft/invalid_grant.json")))
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert connection.invalid is True
    assert connection.last_error == "Microsoft 365 no longer accepts this connection's grant: connect it again."
    response = api_client.get("/v2/calendars", **bearer(key))
    assert response.json()["data"]["connectedCalendars"][0]["health"]["healthy"] is False


def test_a_next_page_on_another_server_is_not_followed(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    day = monday_ahead()
    record_view(oauth_apps, day)
    view = f"{GRAPH}/me/calendars/{DEFAULT}/calendarView"
    oauth_apps.reply(
        "GET",
        view,
        Reply(
            200,
            recorded(
                "microsoft/calendar_view_page1.json", next="http://169.254.169.254/latest/meta-data", **day_values(day)
            ),
        ),
    )
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert "another server" in connection.last_error
    assert all(seen.path != "/latest/meta-data" for seen in oauth_apps.requests)


def test_throttled_and_unavailable_graph_answers_are_the_connections_error(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    view = f"{GRAPH}/me/calendars/{DEFAULT}/calendarView"
    oauth_apps.reply("GET", view, Reply(429, recorded("microsoft/error_429.json"), {"Retry-After": "7"}))
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert connection.last_error == "Microsoft 365 asked to wait 7 s before reading events (HTTP 429)."
    oauth_apps.reply("GET", view, Reply(503, recorded("microsoft/error_503.json")))
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert connection.last_error == (
        "Microsoft 365 answered HTTP 503 while reading events: The service is temporarily unavailable."
    )
    # A write waits at least as long as Graph asked.
    oauth_apps.reply(
        "POST",
        f"{GRAPH}/me/calendars/{DEFAULT}/events",
        Reply(429, recorded("microsoft/error_429.json"), {"Retry-After": "300"}),
    )
    body = booking_body(host, utc(11))
    booking = api_client.post("/v1/bookings", body, format="json", **bearer(key)).json()
    before = timezone.now()
    assert apply_writes(booking["id"]) is False
    assert CalendarWrite.objects.get().due_at >= before + timedelta(seconds=300)


def test_disconnect_forgets_the_connection(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    response = api_client.post(
        "/v2/calendars/office365/disconnect", {"id": connection.pk}, format="json", **bearer(key)
    )
    assert response.status_code == 200, response.content
    assert response.json()["data"]["type"] == "office365_calendar"
    assert not CalendarConnection.objects.exists()
