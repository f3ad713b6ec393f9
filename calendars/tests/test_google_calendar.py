"""Google Calendar through its published API, replayed from recorded answers on loopback (Google
cannot be reached from here): connect (state, PKCE) → callback → calendars listed → busy time
blocks slots → booking written → reschedule patches → cancel deletes; the access token refreshed
on expiry and after a 401; a revoked grant; bad states; Google's error answers."""

import base64
import hashlib
import time
from datetime import date, datetime, timedelta
from datetime import time as clock
from urllib.parse import parse_qs, quote, urlsplit
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, ApplicationFactory, UserFactory
from calendars import crypto
from calendars.models import BookingReference, BusyTime, CalendarConnection, CalendarWrite, ConnectionKind
from calendars.oauth.http import request as provider_request
from calendars.providers import ProviderError
from calendars.selectors import calendar_busy, is_healthy
from calendars.services import connection_refresh
from calendars.tests.recorded_server import Reply, recorded
from calendars.writes import apply_writes, due_write_bookings
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import auth, bearer

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")
PRIMARY = "ada@example.org"
HOLIDAYS = "en.german#holiday@group.v.calendar.google.com"
API = "/calendar/v3"
REDIR = "https://app.example.org/settings/calendars?tab=connected"


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def berlin(hour: int, day: date | None = None) -> datetime:
    return datetime.combine(day or monday_ahead(), clock(hour), tzinfo=BERLIN)


def day_values(day: date) -> dict:
    offset = berlin(10, day).strftime("%z")
    return {
        "day": day.isoformat(),
        "offset": f"{offset[:3]}:{offset[3:]}",
        "next_day": (day + timedelta(days=1)).isoformat(),
        "day_after": (day + timedelta(days=2)).isoformat(),
    }


@pytest.fixture
def host():
    return UserFactory(time_zone="Europe/Berlin", name="Ada Lovelace", email=PRIMARY)


@pytest.fixture
def key(host):
    return ApiKeyFactory(user=host).raw_key


def record_connect(server) -> None:
    server.reply("POST", "/token", Reply(200, recorded("google/token.json")))
    server.reply("GET", f"{API}/users/me/calendarList", Reply(200, recorded("google/calendar_list.json")))


def record_events(server, day: date) -> None:
    server.reply(
        "GET", f"{API}/calendars/{PRIMARY}/events", Reply(200, recorded("google/events.json", **day_values(day)))
    )
    server.reply("GET", f"{API}/calendars/{HOLIDAYS}/events", Reply(200, recorded("google/events_empty.json")))


def start_connect(api_client, key, query: str = f"?redir={quote(REDIR, safe='')}") -> dict:
    response = api_client.get(f"/v2/calendars/google/connect{query}", **bearer(key))
    assert response.status_code == 200, response.content
    url = urlsplit(response.json()["data"]["authUrl"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == "https://accounts.google.com/o/oauth2/v2/auth"
    return {name: values[0] for name, values in parse_qs(url.query).items()}


def connect(api_client, key, server) -> CalendarConnection:
    record_connect(server)
    authorization = start_connect(api_client, key)
    response = api_client.get(
        "/v2/calendars/google/save", {"code": "4/0AeanS0recorded-code", "state": authorization["state"]}
    )
    assert response.status_code == 301, response.content
    return CalendarConnection.objects.get(kind=ConnectionKind.GOOGLE)


def connect_and_book(api_client, key, host, server) -> dict:
    """Google connected, and a booking at 09:00 two Mondays ahead (its event not written yet)."""
    connect(api_client, key, server)
    return book(api_client, key, EventTypeFactory(owner=host, length=60), berlin(9)).json()


def book(api_client, key, event_type, start: datetime, **extra):
    body = {
        "eventTypeId": event_type.pk,
        "start": start.isoformat(),
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "timeZone": "Europe/Berlin",
        **extra,
    }
    return api_client.post("/v1/bookings", body, format="json", **bearer(key))


def sweep() -> None:
    for booking_id in due_write_bookings():
        apply_writes(booking_id)


def test_connect_asks_for_offline_access_with_pkce_and_a_signed_state(api_client, key, oauth_apps):
    authorization = start_connect(api_client, key)
    assert authorization["client_id"] == "1234567890-recorded.apps.googleusercontent.com"
    assert authorization["redirect_uri"] == "http://testserver/v2/calendars/google/save"
    assert authorization["response_type"] == "code"
    assert authorization["access_type"] == "offline"
    assert authorization["prompt"] == "consent"
    assert "https://www.googleapis.com/auth/calendar.events" in authorization["scope"].split()
    assert authorization["code_challenge_method"] == "S256"
    assert len(authorization["code_challenge"]) == 43
    assert "GOCSPX" not in authorization["state"] and oauth_apps.requests == []


def test_the_whole_way_connect_busy_book_reschedule_cancel(api_client, key, host, oauth_apps):
    day = monday_ahead()
    record_connect(oauth_apps)
    authorization = start_connect(api_client, key)
    response = api_client.get(
        "/v2/calendars/google/save", {"code": "4/0AeanS0recorded-code", "state": authorization["state"]}
    )
    assert response.status_code == 301 and response["Location"] == REDIR

    # The code was exchanged with the PKCE verifier of the challenge and the same redirect URI.
    [exchange] = oauth_apps.sent("POST", "/token")
    form = exchange.form
    assert form["grant_type"] == "authorization_code" and form["code"] == "4/0AeanS0recorded-code"
    assert form["redirect_uri"] == authorization["redirect_uri"]
    challenge = base64.urlsafe_b64encode(hashlib.sha256(form["code_verifier"].encode()).digest()).rstrip(b"=")
    assert challenge.decode() == authorization["code_challenge"]
    [listing] = oauth_apps.sent("GET", f"{API}/users/me/calendarList")
    assert listing.headers["Authorization"] == "Bearer ya29.a0AfB_byRecordedAccessTokenOne"

    # Listed in Cal.com's shape: the primary calendar is the destination; no token anywhere.
    answer = api_client.get("/v2/calendars", **bearer(key))
    data = answer.json()["data"]
    [connected] = data["connectedCalendars"]
    assert connected["integration"]["type"] == "google_calendar"
    assert connected["integration"]["slug"] == "google-calendar"
    assert [(c["externalId"], c["readOnly"], c["isSelected"]) for c in connected["calendars"]] == [
        (PRIMARY, False, True),
        (HOLIDAYS, True, True),
    ]
    assert data["destinationCalendar"]["externalId"] == PRIMARY
    assert "ya29" not in answer.content.decode() and "1//0g" not in answer.content.decode()
    connection = CalendarConnection.objects.get()
    assert connection.label == PRIMARY and "ya29" not in connection.credentials

    # Busy time: the dentist blocks; free, cancelled and declined events and other days do not.
    record_events(oauth_apps, day)
    assert connection_refresh(connection=connection)
    [events_read] = oauth_apps.sent("GET", f"{API}/calendars/{PRIMARY}/events")
    assert events_read.query["singleEvents"] == "true"
    assert calendar_busy(host.pk, berlin(0, day), berlin(23, day)) == ((berlin(10, day), berlin(11, day)),)
    all_day = calendar_busy(host.pk, berlin(0, day + timedelta(days=1)), berlin(23, day + timedelta(days=1)))
    assert all_day == ((berlin(0, day + timedelta(days=1)), berlin(0, day + timedelta(days=2))),)
    event_type = EventTypeFactory(owner=host, length=60)
    query = f"eventTypeId={event_type.pk}&startTime={day}&endTime={day}&timeZone=Europe/Berlin"
    slots = api_client.get(f"/v1/slots?{query}", **bearer(key)).json()["slots"][day.isoformat()]
    assert [int(slot["time"][11:13]) for slot in slots] == [9, 11, 12, 13, 14, 15, 16]
    assert book(api_client, key, event_type, berlin(10, day)).status_code == 409

    # Booked: one event inserted (after looking for one with the same iCalUID), Google sends no mail.
    first = book(api_client, key, event_type, berlin(14, day)).json()
    uid = first["iCalUID"]
    assert uid == f"{first['uid']}@Cal.com"
    events_path = f"{API}/calendars/{PRIMARY}/events"
    oauth_apps.reply("GET", events_path, Reply(200, recorded("google/events_empty.json")))
    inserted = recorded("google/event.json", event_id="bookingevent0001", uid=uid, start="", end="")
    oauth_apps.reply("POST", events_path, Reply(200, inserted))
    sweep()
    [lookup] = [seen for seen in oauth_apps.sent("GET", events_path) if "iCalUID" in seen.query]
    assert lookup.query["iCalUID"] == uid
    [insert] = oauth_apps.sent("POST", events_path)
    assert insert.query["sendUpdates"] == "none"
    assert insert.json["iCalUID"] == uid
    assert insert.json["start"] == {
        "dateTime": berlin(14, day).astimezone(ZoneInfo("UTC")).isoformat(),
        "timeZone": "UTC",
    }
    assert insert.json["attendees"] == [{"email": "grace@example.org", "displayName": "Grace Hopper"}]
    reference = BookingReference.objects.get()
    assert (reference.type, reference.href, reference.uid) == ("google_calendar", "bookingevent0001", uid)

    # Read back, the service's own event does not block its booking.
    own = recorded("google/events.json", **day_values(day))
    own["items"] = [
        {
            **inserted,
            "start": {"dateTime": berlin(14, day).isoformat()},
            "end": {"dateTime": berlin(15, day).isoformat()},
        }
    ]
    oauth_apps.reply("GET", events_path, Reply(200, own))
    assert connection_refresh(connection=connection)
    assert BusyTime.objects.filter(calendar__external_id=PRIMARY).count() == 1
    assert calendar_busy(host.pk, berlin(0, day), berlin(23, day)) == ()

    # Rescheduled (v1: a new booking): the same event is patched, its sequence raised.
    event_path = f"{events_path}/bookingevent0001"
    oauth_apps.reply("PATCH", event_path, Reply(200, inserted))
    second = book(api_client, key, event_type, berlin(15, day), rescheduleUid=first["uid"]).json()
    assert second["uid"] != first["uid"] and second["iCalUID"] == uid
    sweep()
    patch = oauth_apps.sent("PATCH", event_path)[-1]
    assert patch.json["start"]["dateTime"] == berlin(15, day).astimezone(ZoneInfo("UTC")).isoformat()
    assert patch.json["sequence"] >= 1 and patch.query["sendUpdates"] == "none"
    assert len(oauth_apps.sent("POST", events_path)) == 1
    reference = BookingReference.objects.get()
    assert (reference.booking_id, reference.uid) == (second["id"], uid)

    # Cancelled: the event is deleted; the reference says so.
    oauth_apps.reply("DELETE", event_path, Reply(204))
    response = api_client.delete(f"/v1/bookings/{second['id']}/cancel?apiKey={key}")
    assert response.status_code == 200, response.content
    sweep()
    assert len(oauth_apps.sent("DELETE", event_path)) == 1
    assert BookingReference.objects.get().deleted is True
    assert not CalendarWrite.objects.filter(done_at__isnull=True).exists()


def test_an_expired_access_token_is_refreshed_and_stored_encrypted(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    secret = crypto.decrypt(connection.credentials)
    connection.credentials = crypto.encrypt({**secret, "expires_at": time.time() - 10})
    connection.save()
    oauth_apps.reply("POST", "/token", Reply(200, recorded("google/token_refreshed.json")))
    record_events(oauth_apps, monday_ahead())
    assert connection_refresh(connection=connection)
    refresh = oauth_apps.sent("POST", "/token")[-1].form
    assert refresh["grant_type"] == "refresh_token" and refresh["refresh_token"] == "1//0gRecordedRefreshTokenOne"
    [read, _] = oauth_apps.sent("GET", f"{API}/calendars/{PRIMARY}/events") + oauth_apps.sent(
        "GET", f"{API}/calendars/{HOLIDAYS}/events"
    )
    assert read.headers["Authorization"] == "Bearer ya29.a0AfB_byRecordedAccessTokenTwo"
    stored = crypto.decrypt(CalendarConnection.objects.get().credentials)
    # Google's refresh answer has no refresh token: the one there was is kept.
    assert stored["access_token"] == "ya29.a0AfB_byRecordedAccessTokenTwo"
    assert stored["refresh_token"] == "1//0gRecordedRefreshTokenOne"
    assert stored["expires_at"] > time.time()


def test_a_401_refreshes_the_token_once_and_retries(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    day = monday_ahead()
    oauth_apps.reply("POST", "/token", Reply(200, recorded("google/token_refreshed.json")))
    oauth_apps.reply(
        "GET",
        f"{API}/calendars/{PRIMARY}/events",
        Reply(
            401, recorded("google/error_401.json"), {"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"'}
        ),
        Reply(200, recorded("google/events.json", **day_values(day))),
    )
    oauth_apps.reply("GET", f"{API}/calendars/{HOLIDAYS}/events", Reply(200, recorded("google/events_empty.json")))
    assert connection_refresh(connection=connection)
    reads = oauth_apps.sent("GET", f"{API}/calendars/{PRIMARY}/events")
    assert [seen.headers["Authorization"][-3:] for seen in reads] == ["One", "Two"]
    assert calendar_busy(host.pk, berlin(0, day), berlin(23, day)) == ((berlin(10, day), berlin(11, day)),)


def test_a_revoked_grant_marks_the_connection_unhealthy_and_keeps_its_busy_time(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    day = monday_ahead()
    record_events(oauth_apps, day)
    assert connection_refresh(connection=connection)
    secret = crypto.decrypt(connection.credentials)
    connection.credentials = crypto.encrypt({**secret, "expires_at": 0})
    connection.save()
    oauth_apps.reply("POST", "/token", Reply(400, recorded("google/invalid_grant.json")))
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert connection.invalid is True and "connect it again" in connection.last_error
    assert not is_healthy(connection)
    assert calendar_busy(host.pk, berlin(0, day), berlin(23, day)) == ((berlin(10, day), berlin(11, day)),)
    # Slots keep answering from the cache; the next read asks Google nothing.
    event_type = EventTypeFactory(owner=host, length=60)
    query = f"eventTypeId={event_type.pk}&startTime={day}&endTime={day}&timeZone=Europe/Berlin"
    assert api_client.get(f"/v1/slots?{query}", **bearer(key)).status_code == 200
    asked = len(oauth_apps.requests)
    assert connection_refresh(connection=connection) is False
    assert len(oauth_apps.requests) == asked
    check = api_client.get("/v2/calendars/google/check", **bearer(key))
    assert check.status_code == 400 and "connect it again" in check.json()["error"]["message"]
    # Connecting the same account again makes it valid, with the new tokens.
    record_connect(oauth_apps)
    authorization = start_connect(api_client, key, "")
    response = api_client.get("/v2/calendars/google/save", {"code": "4/0again", "state": authorization["state"]})
    assert response.status_code == 200, response.content
    assert response.json()["data"]["id"] == connection.pk
    connection.refresh_from_db()
    assert connection.invalid is False and CalendarConnection.objects.count() == 1


def test_rate_limited_reads_and_writes_wait_as_google_asks(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    oauth_apps.reply(
        "GET",
        f"{API}/calendars/{PRIMARY}/events",
        Reply(429, recorded("google/error_429.json"), {"Retry-After": "120"}),
    )
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert "asked to wait 120 s" in connection.last_error
    event_type = EventTypeFactory(owner=host, length=60)
    booking = book(api_client, key, event_type, berlin(9)).json()
    before = timezone.now()
    assert apply_writes(booking["id"]) is False
    write = CalendarWrite.objects.get()
    assert write.due_at >= before + timedelta(seconds=120)
    assert "asked to wait 120 s" in write.last_error


def test_a_google_server_error_is_the_connections_error_and_the_write_retries(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    oauth_apps.reply("GET", f"{API}/calendars/{PRIMARY}/events", Reply(500, recorded("google/error_500.json")))
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert connection.last_error == "Google Calendar answered HTTP 500 while reading events: Backend Error."
    event_type = EventTypeFactory(owner=host, length=60)
    booking = book(api_client, key, event_type, berlin(9)).json()
    assert apply_writes(booking["id"]) is False
    assert CalendarWrite.objects.get().attempts == 1
    # Google back: the retry finds no event of that iCalUID and inserts one.
    events_path = f"{API}/calendars/{PRIMARY}/events"
    oauth_apps.reply("GET", events_path, Reply(200, recorded("google/events_empty.json")))
    oauth_apps.reply(
        "POST", events_path, Reply(200, recorded("google/event.json", event_id="e1", uid="u", start="", end=""))
    )
    CalendarWrite.objects.update(due_at=timezone.now())
    sweep()
    assert BookingReference.objects.get().href == "e1"


def test_a_write_whose_outcome_was_unknown_patches_the_event_google_already_has(api_client, key, host, oauth_apps):
    booking = connect_and_book(api_client, key, host, oauth_apps)
    uid = booking["iCalUID"]
    events_path = f"{API}/calendars/{PRIMARY}/events"
    there = recorded("google/events_empty.json")
    there["items"] = [recorded("google/event.json", event_id="alreadythere", uid=uid, start="", end="")]
    oauth_apps.reply("GET", events_path, Reply(200, there))
    oauth_apps.reply("PATCH", f"{events_path}/alreadythere", Reply(200, there["items"][0]))
    sweep()
    assert oauth_apps.sent("POST", events_path) == []
    assert len(oauth_apps.sent("PATCH", f"{events_path}/alreadythere")) == 1
    assert BookingReference.objects.get().href == "alreadythere"


def test_an_event_already_gone_counts_as_deleted(api_client, key, host, oauth_apps):
    booking = connect_and_book(api_client, key, host, oauth_apps)
    events_path = f"{API}/calendars/{PRIMARY}/events"
    oauth_apps.reply("GET", events_path, Reply(200, recorded("google/events_empty.json")))
    oauth_apps.reply(
        "POST", events_path, Reply(200, recorded("google/event.json", event_id="gone1", uid="u", start="", end=""))
    )
    sweep()
    oauth_apps.reply("DELETE", f"{events_path}/gone1", Reply(410, recorded("google/error_410.json")))
    assert api_client.delete(f"/v1/bookings/{booking['id']}/cancel?apiKey={key}").status_code == 200
    sweep()
    assert BookingReference.objects.get().deleted is True


@pytest.mark.parametrize(
    "tamper",
    [
        lambda state: state[:-2] + ("AA" if not state.endswith("AA") else "BB"),
        lambda state: "",
        lambda state: "eyJ1IjoxfQ:1tZ0:forged",
    ],
    ids=["altered", "missing", "forged"],
)
def test_a_bad_state_is_a_400_that_connects_nothing_and_asks_google_nothing(api_client, key, oauth_apps, tamper):
    record_connect(oauth_apps)
    authorization = start_connect(api_client, key)
    response = api_client.get("/v2/calendars/google/save", {"code": "4/0code", "state": tamper(authorization["state"])})
    assert response.status_code == 400, response.content
    assert response.json()["status"] == "error"
    assert not CalendarConnection.objects.exists() and oauth_apps.requests == []


def test_a_state_for_the_other_provider_or_expired_is_a_400(api_client, key, oauth_apps, settings):
    record_connect(oauth_apps)
    authorization = start_connect(api_client, key)
    response = api_client.get("/v2/calendars/office365/save", {"code": "c", "state": authorization["state"]})
    assert response.status_code == 400 and "another calendar" in response.json()["error"]["message"]
    settings.CALENDARS = {**settings.CALENDARS, "OAUTH_STATE_MAX_AGE_SECONDS": -1}
    response = api_client.get("/v2/calendars/google/save", {"code": "c", "state": authorization["state"]})
    assert response.status_code == 400 and "too long" in response.json()["error"]["message"]
    assert not CalendarConnection.objects.exists() and oauth_apps.requests == []


def test_the_connection_goes_to_the_user_the_state_names(api_client, key, host, oauth_apps):
    record_connect(oauth_apps)
    authorization = start_connect(api_client, key)
    other = ApiKeyFactory(user=UserFactory()).raw_key  # someone else's browser, signed in elsewhere
    response = api_client.get(
        "/v2/calendars/google/save", {"code": "c", "state": authorization["state"]}, **bearer(other)
    )
    assert response.status_code == 301
    assert CalendarConnection.objects.get().user == host


def test_a_refused_consent_or_failed_exchange_redirects_with_the_error_and_stores_nothing(api_client, key, oauth_apps):
    authorization = start_connect(api_client, key)
    response = api_client.get("/v2/calendars/google/save", {"error": "access_denied", "state": authorization["state"]})
    assert response.status_code == 301
    assert response["Location"] == f"{REDIR}&error=access_denied"
    oauth_apps.reply("POST", "/token", Reply(503, {"error": "temporarily_unavailable"}))
    response = api_client.get("/v2/calendars/google/save", {"code": "c", "state": authorization["state"]})
    assert response.status_code == 301
    assert parse_qs(urlsplit(response["Location"]).query)["error"] == [
        "Google Calendar answered HTTP 503 while exchanging the authorization code: temporarily_unavailable."
    ]
    oauth_apps.reply("POST", "/token", Reply(400, recorded("google/invalid_grant.json")))
    response = api_client.get(
        "/v2/calendars/google/save", {"code": "used", "state": start_connect(api_client, key, "")["state"]}
    )
    assert response.status_code == 400 and "grant" in response.json()["error"]["message"]
    assert not CalendarConnection.objects.exists()


def test_a_dry_run_consents_and_stores_nothing(api_client, key, oauth_apps):
    authorization = start_connect(api_client, key, f"?redir={quote(REDIR, safe='')}&isDryRun=true")
    response = api_client.get("/v2/calendars/google/save", {"code": "c", "state": authorization["state"]})
    assert response.status_code == 301 and response["Location"] == REDIR
    assert not CalendarConnection.objects.exists() and oauth_apps.requests == []


def test_without_the_app_configured_connect_names_what_is_missing(api_client, key, settings):
    settings.CALENDARS = {**settings.CALENDARS, "GOOGLE": {"CLIENT_ID": "", "CLIENT_SECRET": ""}}
    response = api_client.get("/v2/calendars/google/connect", **bearer(key))
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "CALENDAR_GOOGLE_CLIENT_ID" in message and "CALENDAR_GOOGLE_CLIENT_SECRET" in message


@pytest.mark.parametrize(
    "query", ["?redir=javascript:alert(1)", "?redir=/relative", "?isDryRun=yes"], ids=["script", "relative", "dry"]
)
def test_bad_connect_parameters_are_a_400(api_client, key, oauth_apps, query):
    response = api_client.get(f"/v2/calendars/google/connect{query}", **bearer(key))
    assert response.status_code == 400, response.content


def test_redir_leads_only_to_listed_hosts_the_service_or_the_calling_clients(api_client, key, host, oauth_apps):
    """Anyone can get a state for their own account: an unchecked redir would make the callback an
    open redirect."""
    response = api_client.get(f"/v2/calendars/google/connect?redir={quote('https://evil.example/x')}", **bearer(key))
    assert response.status_code == 400 and "CALENDAR_OAUTH_REDIR_HOSTS" in response.json()["error"]["message"]
    own = api_client.get(f"/v2/calendars/google/connect?redir={quote('http://testserver/done')}", **bearer(key))
    assert own.status_code == 200
    client = ApplicationFactory(redirect_uris="https://partner.example/oauth/callback")
    token = AccessTokenFactory(user=host, application=client, scope="WRITE_CALENDAR").raw_token
    theirs = api_client.get(
        f"/v2/calendars/google/connect?redir={quote('https://partner.example/calendars')}", **bearer(token)
    )
    assert theirs.status_code == 200, theirs.content
    response = api_client.get(f"/v2/calendars/google/connect?redir={quote('https://evil.example/')}", **bearer(token))
    assert response.status_code == 400


def test_connect_and_save_of_an_unknown_calendar_are_a_400(api_client, key):
    assert api_client.get("/v2/calendars/apple/connect", **bearer(key)).status_code == 400
    assert api_client.get("/v2/calendars/apple/save?state=x&code=y").status_code == 400


def test_connect_needs_a_credential_with_the_write_calendar_scope(api_client, host, oauth_apps):
    assert api_client.get("/v2/calendars/google/connect").status_code == 401
    response = api_client.get("/v2/calendars/google/connect", **auth(host, scope="READ_CALENDAR"))
    assert response.status_code == 403
    assert api_client.get("/v2/calendars/google/connect", **auth(host, scope="WRITE_CALENDAR")).status_code == 200


def test_the_callback_address_is_the_configured_public_one(api_client, key, oauth_apps, settings):
    settings.CALENDARS = {**settings.CALENDARS, "OAUTH_REDIRECT_BASE_URL": "https://scheduling.example.org/"}
    authorization = start_connect(api_client, key, "")
    assert authorization["redirect_uri"] == "https://scheduling.example.org/v2/calendars/google/save"


def test_the_outbound_rule_applies_to_googles_endpoints_too(api_client, key, host, oauth_apps, settings):
    """The endpoints are settings, not input, and still pass the one outbound rule: a deployment
    whose rule refuses loopback never calls the recorded server."""
    connection = connect(api_client, key, oauth_apps)
    asked = len(oauth_apps.requests)
    settings.OUTBOUND = {**settings.OUTBOUND, "ALLOWED_CIDRS": []}
    assert connection_refresh(connection=connection) is False
    connection.refresh_from_db()
    assert "loopback" in connection.last_error
    assert len(oauth_apps.requests) == asked


def test_a_calendar_id_from_googles_answer_is_one_path_segment(api_client, key, host, oauth_apps):
    connection = connect(api_client, key, oauth_apps)
    calendar = connection.calendars.get(external_id=PRIMARY)
    calendar.external_id = "../../users/me/calendarList?x="
    calendar.save()
    connection.calendars.exclude(pk=calendar.pk).update(is_selected=False)
    connection_refresh(connection=connection)
    [seen] = [seen for seen in oauth_apps.requests[-1:]]
    assert seen.path == f"{API}/calendars/../../users/me/calendarList?x=/events"


def test_an_answer_larger_than_the_bound_is_refused_while_it_is_read(settings, oauth_apps):
    settings.CALENDARS = {**settings.CALENDARS, "MAX_RESPONSE_BYTES": 4096}
    oauth_apps.reply("GET", f"{API}/users/me/calendarList", Reply(200, {"items": [{"id": "x" * 8192}]}))
    with pytest.raises(ProviderError, match="Google Calendar answered more than 4096 bytes"):
        provider_request("Google Calendar", "GET", f"{oauth_apps.url}{API}/users/me/calendarList", token="t")
    oauth_apps.reply("GET", f"{API}/users/me/calendarList", Reply(200, {"items": []}))
    answer = provider_request("Google Calendar", "GET", f"{oauth_apps.url}{API}/users/me/calendarList", token="t")
    assert (answer.status, answer.data) == (200, {"items": []})
