"""Pipedream's Cal.com action on API v2, replayed as it calls.

PipedreamHQ/pipedream, components/cal_com/:
- actions/create-booking-v2/create-booking-v2.mjs ("Create Booking (V2)"): the body is
  `{eventTypeId, start, attendee: {name, email, timeZone, language}, location}`, where `language`
  is left out when not set (it is `undefined`, which JSON drops) and `location` is
  `{"type": "integration", "integration": <cal-video | google-meet | zoom | whereby-video |
  office365-video>}` or `{"type": "organizersDefaultApp"}`; the summary reads `response.data.id`,
  and an error's message is read from the answer's `data.message`.
- cal_com.app.mjs `_makeV2Request` and `createBookingV2`: `POST https://{domain}/v2/bookings` with
  `Content-Type: application/json`, `cal-api-version: 2024-08-13` and
  `Authorization: Bearer {api_key}`, no query string; a failure's message is taken from
  `error.response.data.error.message`, then `data.message`. Its other actions (and its sources'
  webhooks) call v1 with `?apiKey=`; those are v1 replays.
The `{domain}` of the connected account is the host, so the action can be pointed at this service.
"""

import json

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from calv2.tests.helpers import V2Client, event_type_of, free_slot
from scheduling.models import Booking

pytestmark = pytest.mark.django_db


class PipedreamCalCom:
    """`createBookingV2` as the app file sends it."""

    def __init__(self, client, api_key: str):
        self.client, self.api_key = client, api_key

    def create_booking_v2(self, data: dict):
        body = {key: value for key, value in data.items() if value is not None}
        body["attendee"] = {key: value for key, value in data["attendee"].items() if value is not None}
        return self.client.generic(
            "POST",
            "/v2/bookings",
            json.dumps(body),
            content_type="application/json",
            HTTP_CAL_API_VERSION="2024-08-13",
            HTTP_AUTHORIZATION=f"Bearer {self.api_key}",
        )

    def run(self, *, event_type_id, start, name, email, time_zone, language=None, location_type, integration=None):
        """The action's `run`: the location object, then the call; the summary's id or the error's message."""
        location = (
            {"type": "integration", "integration": integration}
            if location_type == "integration"
            else {"type": "organizersDefaultApp"}
        )
        data = {
            "eventTypeId": event_type_id,
            "start": start,
            "attendee": {"name": name, "email": email, "timeZone": time_zone, "language": language},
            "location": location,
        }
        response = self.create_booking_v2(data)
        answer = response.json()
        if response.status_code >= 400:
            return response.status_code, answer["error"]["message"]
        return response.status_code, answer


@pytest.fixture
def setup(api_client):
    """The action, the event type it books and a v2 client to find free slots with."""
    user = UserFactory()
    event_type = event_type_of(user, length=30)
    return PipedreamCalCom(api_client, ApiKeyFactory(user=user).raw_key), event_type, V2Client(api_client, user)


@pytest.mark.parametrize(
    ("integration", "stored"),
    [("cal-video", "integrations:daily"), ("google-meet", "integrations:google:meet"), ("zoom", "integrations:zoom")],
)
def test_create_booking_v2_with_an_integration_location(setup, integration, stored):
    pipedream, event_type, v2 = setup
    start = free_slot(v2, event_type)
    status, answer = pipedream.run(
        event_type_id=event_type.pk,
        start=start,
        name="Ada Lovelace",
        email="ada@example.org",
        time_zone="Europe/London",
        language="en",
        location_type="integration",
        integration=integration,
    )
    assert status == 201
    data = answer["data"]
    assert answer["status"] == "success" and data["id"] == Booking.objects.get().pk
    assert data["status"] == "accepted" and data["location"] == stored and data["meetingUrl"] is None
    assert data["attendees"][0]["language"] == "en"


def test_create_booking_v2_with_the_organizers_default_app_and_no_language(setup):
    pipedream, event_type, v2 = setup
    status, answer = pipedream.run(
        event_type_id=event_type.pk,
        start=free_slot(v2, event_type),
        name="Ada Lovelace",
        email="ada@example.org",
        time_zone="Europe/London",
        location_type="organizersDefaultApp",
    )
    assert status == 201
    data = answer["data"]
    assert data["location"] is None and data["attendees"][0]["language"] == "en"
    assert Booking.objects.get().location == ""


def test_create_booking_v2_errors_carry_the_message_the_action_shows(setup):
    pipedream, event_type, v2 = setup
    start = free_slot(v2, event_type)
    booked = {"name": "Ada Lovelace", "email": "ada@example.org", "time_zone": "Europe/London"}
    assert (
        pipedream.run(event_type_id=event_type.pk, start=start, location_type="organizersDefaultApp", **booked)[0]
        == 201
    )
    status, message = pipedream.run(
        event_type_id=event_type.pk, start=start, location_type="organizersDefaultApp", **booked
    )
    assert status == 409 and "not an available slot" in message
    status, message = pipedream.run(
        event_type_id=event_type.pk,
        start=free_slot(v2, event_type, days=8),
        location_type="integration",
        integration="carrier-pigeon",
        **booked,
    )
    assert status == 400 and "location" in message
    assert Booking.objects.count() == 1
