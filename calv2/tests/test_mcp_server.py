"""Cal.com's MCP server (calcom/companion, apps/mcp-server), replayed request by request against
this service as its configurable base URL (`CAL_API_BASE_URL`).

- src/utils/api-client.ts `calApi`: `<base>/v2/<path>` with the auth headers below, the body as
  JSON; a non-2xx answer becomes an error carrying the body's `message`.
- src/auth.ts: `Authorization: Bearer <API key or access token>`, `cal-api-version: 2024-08-13`,
  `Content-Type: application/json` on every call.
- src/tools/bookings.ts: `get_booking_attendees` is `GET bookings/{uid}/attendees`,
  `get_booking_attendee` is `GET bookings/{uid}/attendees/{attendeeId}` (the id read from the
  list), `add_booking_attendee` is `POST bookings/{uid}/attendees` with `{name, timeZone, email,
  phoneNumber?, language?}`; the companion's mobile app adds guests with
  `POST bookings/{uid}/guests` `{guests: [{email, name?}]}`.
- src/tools/conferencing.ts: `GET conferencing`.
- src/tools/event-types.ts: `get_scheduling_config` is `GET event-types/{eventTypeId}/scheduling-config`,
  the answer shown as it comes (`schedulingType`, `hosts` with weights, `hostGroups`, …).
- src/auth/oauth-handlers.ts: the authorization code is exchanged with
  `POST <base>/v2/auth/oauth2/token` and a JSON body `{client_id, grant_type: "authorization_code",
  code, redirect_uri, client_secret}`, refreshed with `{client_id, client_secret, grant_type:
  "refresh_token", refresh_token}`; it reads `access_token`, `refresh_token`, `expires_in`.
  Cal.com's apps show a client with `GET <base>/v2/auth/oauth2/clients/{clientId}`.
"""

import json

import pytest

from accounts.tests.factories import AccessTokenFactory, ApplicationFactory, UserFactory
from accounts.tests.oauth_support import obtain_code, sign_in
from calv2.tests.helpers import assert_error
from scheduling.models import Attendee
from scheduling.tests.factories import BookingFactory, HostFactory, TeamEventTypeFactory

pytestmark = pytest.mark.django_db

VERSION = "2024-08-13"


class McpCalApi:
    """`calApi` with the headers of src/auth.ts."""

    def __init__(self, client, token: str):
        self.client, self.token = client, token

    def call(self, path: str, *, method: str = "GET", body=None):
        headers = {"HTTP_AUTHORIZATION": f"Bearer {self.token}", "HTTP_CAL_API_VERSION": VERSION}
        payload = json.dumps(body) if body is not None else ""
        return self.client.generic(method, f"/v2/{path}", payload, content_type="application/json", **headers)

    def ok(self, path: str, **kwargs):
        response = self.call(path, **kwargs)
        assert 200 <= response.status_code < 300, response.content
        return response.json()


@pytest.fixture
def mcp(v2):
    return McpCalApi(v2.client, v2.key)


@pytest.fixture
def booking(owner):
    return BookingFactory(
        organizer=owner,
        attendees=[
            {"name": "Ada Lovelace", "email": "ada@example.org", "time_zone": "Europe/London"},
            {"name": "", "email": "guest@example.org", "time_zone": "Europe/London"},
        ],
    )


def test_attendee_tools_list_one_and_add(mcp, booking):
    listed = mcp.ok(f"bookings/{booking.uid}/attendees")
    assert listed["status"] == "success"
    assert [attendee["email"] for attendee in listed["data"]] == ["ada@example.org", "guest@example.org"]
    first = listed["data"][0]
    assert {"id", "name", "email", "displayEmail", "timeZone", "absent"} <= set(first)

    one = mcp.ok(f"bookings/{booking.uid}/attendees/{first['id']}")
    assert one["data"] == first

    added = mcp.ok(
        f"bookings/{booking.uid}/attendees",
        method="POST",
        body={"name": "Alan Turing", "timeZone": "Europe/London", "language": "en", "email": "alan@example.org"},
    )
    assert added["data"]["email"] == "alan@example.org"
    assert len(mcp.ok(f"bookings/{booking.uid}/attendees")["data"]) == 3


def test_an_attendee_of_another_booking_or_an_unknown_booking_is_a_404(mcp, booking, owner):
    other = BookingFactory(organizer=owner)
    stranger = other.attendees.get()
    assert_error(mcp.call(f"bookings/{booking.uid}/attendees/{stranger.pk}"), 404, "NotFoundException")
    assert_error(mcp.call("bookings/no-such-uid/attendees"), 404, "NotFoundException")
    someone_elses = BookingFactory()
    assert_error(mcp.call(f"bookings/{someone_elses.uid}/attendees"), 404, "NotFoundException")


def test_guests_are_added_all_or_none(mcp, booking):
    response = mcp.call(
        f"bookings/{booking.uid}/guests",
        method="POST",
        body={"guests": [{"email": "new@example.org"}, {"email": "named@example.org", "name": "Named Guest"}]},
    )
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert set(data["guests"]) == {"guest@example.org", "new@example.org"}
    assert "named@example.org" in [attendee["email"] for attendee in data["attendees"]]
    added = Attendee.objects.get(booking=booking, email="new@example.org")
    assert (added.name, added.time_zone) == ("", "Europe/London")

    before = sorted(booking.attendees.values_list("email", flat=True))
    duplicate = mcp.call(
        f"bookings/{booking.uid}/guests",
        method="POST",
        body={"guests": [{"email": "fresh@example.org"}, {"email": "ADA@example.org"}]},
    )
    assert_error(duplicate, 409, "ConflictException")
    for bad in (
        {"guests": []},
        {"guests": [{"name": "No email"}]},
        {"guests": [{"email": "not-an-address"}]},
        {"guests": [{"email": "tz@example.org", "timeZone": "Mars/Olympus"}]},
        {"guests": [{"email": f"g{n}@example.org"} for n in range(11)]},
    ):
        assert_error(mcp.call(f"bookings/{booking.uid}/guests", method="POST", body=bad), 400, "BadRequestException")
    assert sorted(booking.attendees.values_list("email", flat=True)) == before


def test_guests_need_the_write_scope(api_client, booking, owner):
    token = AccessTokenFactory(user=owner, scope="READ_BOOKING").raw_token
    reader = McpCalApi(api_client, token)
    assert reader.call(f"bookings/{booking.uid}/attendees").status_code == 200
    refused = reader.call(
        f"bookings/{booking.uid}/guests", method="POST", body={"guests": [{"email": "x@example.org"}]}
    )
    assert_error(refused, 403, "ForbiddenException")
    assert not booking.attendees.filter(email="x@example.org").exists()


def test_conferencing_lists_no_connected_app(mcp):
    assert mcp.ok("conferencing") == {"status": "success", "data": []}


def post_token(api_client, body: dict):
    """What oauth-handlers.ts sends: a JSON body to `<base>/v2/auth/oauth2/token`."""
    return api_client.post("/v2/auth/oauth2/token", json.dumps(body), content_type="application/json")


def test_oauth_code_exchange_and_refresh_with_json_bodies(client, api_client):
    user = UserFactory()
    application = ApplicationFactory()
    sign_in(client, user)
    code = obtain_code(client, application, scope="READ_BOOKING READ_PROFILE")
    exchange = {
        "client_id": application.client_id,
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": application.redirect_uris.split()[0],
        "client_secret": application.raw_client_secret,
    }

    exchanged = post_token(api_client, exchange)
    assert exchanged.status_code == 200, exchanged.content
    tokens = exchanged.json()
    assert tokens["token_type"].lower() == "bearer" and isinstance(tokens["expires_in"], int)
    assert McpCalApi(api_client, tokens["access_token"]).ok("conferencing")["status"] == "success"

    refresh = {
        "client_id": application.client_id,
        "client_secret": application.raw_client_secret,
        "grant_type": "refresh_token",
        "refresh_token": tokens["refresh_token"],
    }
    refreshed = post_token(api_client, refresh)
    assert refreshed.status_code == 200, refreshed.content
    assert refreshed.json()["access_token"] != tokens["access_token"]

    replayed = post_token(api_client, exchange)
    assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"


def test_client_facts_are_public_and_a_suspended_or_unknown_client_is_a_404(api_client):
    application = ApplicationFactory(name="Companion", redirect_uris="http://127.0.0.1:8765/callback")
    answer = api_client.get(f"/v2/auth/oauth2/clients/{application.client_id}")
    assert answer.status_code == 200
    assert answer.json() == {
        "status": "success",
        "data": {
            "client_id": application.client_id,
            "redirect_uri": "http://127.0.0.1:8765/callback",
            "name": "Companion",
            "logo": "https://example.com/logo.png",
            "is_trusted": False,
            "client_type": "CONFIDENTIAL",
        },
    }
    assert "secret" not in answer.content.decode().lower()
    assert_error(api_client.get("/v2/auth/oauth2/clients/unknown"), 404, "NotFoundException")
    application.profile.suspended = True
    application.profile.save()
    assert_error(api_client.get(f"/v2/auth/oauth2/clients/{application.client_id}"), 404, "NotFoundException")


def test_get_scheduling_config_of_a_round_robin_event_type(mcp, owner):
    host = HostFactory(event_type=TeamEventTypeFactory(), user=owner, weight=150)
    host.membership.role = "OWNER"
    host.membership.save()

    data = mcp.ok(f"event-types/{host.event_type_id}/scheduling-config")["data"]

    assert data["schedulingType"] == "roundRobin" and data["hostGroups"] == []
    assert [(h["userId"], h["weight"]) for h in data["hosts"]] == [(owner.pk, 150)]
