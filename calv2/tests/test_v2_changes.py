"""PATCH /v2/bookings/{uid}/location, POST /v2/api-keys/refresh and DELETE
/v2/event-types/{id}/webhooks: Cal.com's bodies and answers, who may call them, and every refusal
as a v2 error that changes nothing."""

import pytest

from accounts.models import ApiKey
from accounts.tests.factories import AccessTokenFactory, MembershipFactory, TeamFactory, UserFactory
from calv2.tests.helpers import V2Client, assert_error
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from webhooks.models import Webhook
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

VERSION = "2024-08-13"


# --- location ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "stored"),
    [
        ({"type": "address", "address": "1 Main St"}, "1 Main St"),
        ({"type": "link", "link": "https://meet.example.com/ada"}, "https://meet.example.com/ada"),
        ({"type": "phone", "phone": "+441234567890"}, "+441234567890"),
        ("Room 4", "Room 4"),
    ],
)
def test_the_host_changes_the_location(v2, owner, location, stored):
    booking = BookingFactory(organizer=owner, location="Old place")
    answer = v2.call("PATCH", f"/v2/bookings/{booking.uid}/location", {"location": location}, version=VERSION)
    assert answer.status_code == 200, answer.content
    assert answer.json()["data"]["location"] == stored
    booking.refresh_from_db()
    assert booking.location == stored


def test_a_location_change_that_is_refused_changes_nothing(v2, owner, api_client):
    booking = BookingFactory(organizer=owner, location="Old place")
    cancelled = BookingFactory(organizer=owner, location="Old place", status="CANCELLED")
    attendee_side = BookingFactory(location="Old place", attendees=[{"email": owner.email, "name": "Me"}])
    body = {"location": "New place"}
    assert_error(
        v2.call("PATCH", f"/v2/bookings/{booking.uid}/location", {}, version=VERSION), 400, "BadRequestException"
    )
    assert_error(
        v2.call("PATCH", f"/v2/bookings/{booking.uid}/location", {"location": 7}, version=VERSION),
        400,
        "BadRequestException",
    )
    assert_error(
        v2.call("PATCH", f"/v2/bookings/{cancelled.uid}/location", body, version=VERSION), 409, "ConflictException"
    )
    assert_error(
        v2.call("PATCH", f"/v2/bookings/{attendee_side.uid}/location", body, version=VERSION), 403, "ForbiddenException"
    )
    assert_error(v2.call("PATCH", "/v2/bookings/nope/location", body, version=VERSION), 404, "NotFoundException")
    for row in (booking, cancelled, attendee_side):
        row.refresh_from_db()
        assert row.location == "Old place"


# --- API key refresh --------------------------------------------------------------------------


def test_refresh_replaces_the_key_the_request_is_made_with(api_client, owner):
    v2 = V2Client(api_client, owner)
    old = ApiKey.objects.get(user=owner)
    answer = v2.call("POST", "/v2/api-keys/refresh", {"apiKeyDaysValid": 60}, version=VERSION)
    assert answer.status_code == 200, answer.content
    new_key = answer.json()["data"]["apiKey"]
    assert new_key != v2.key

    assert_error(v2.call("GET", "/v2/me", version=VERSION), 401, "UnauthorizedException")
    v2.key = new_key
    assert v2.call("GET", "/v2/me", version=VERSION).status_code == 200
    new = ApiKey.objects.exclude(pk=old.pk).get(user=owner)
    assert new.note == old.note and 59 <= (new.expires_at - new.created_at).days <= 60


def test_refresh_without_expiry(api_client, owner):
    v2 = V2Client(api_client, owner)
    answer = v2.call("POST", "/v2/api-keys/refresh", {"apiKeyNeverExpires": True}, version=VERSION)
    assert answer.status_code == 200
    assert ApiKey.objects.get(user=owner, revoked_at__isnull=True).expires_at is None


def test_refresh_refuses_an_oauth_token_and_a_bad_body_and_changes_nothing(api_client, owner):
    token = AccessTokenFactory(user=owner, scope="READ_PROFILE").raw_token
    refused = api_client.post(
        "/v2/api-keys/refresh", {}, format="json", HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CAL_API_VERSION=VERSION
    )
    assert_error(refused, 403, "ForbiddenException")
    v2 = V2Client(api_client, owner)
    for body in ({"apiKeyDaysValid": 0}, {"apiKeyDaysValid": "30"}, {"apiKeyNeverExpires": "yes"}):
        assert_error(v2.call("POST", "/v2/api-keys/refresh", body, version=VERSION), 400, "BadRequestException")
    assert ApiKey.objects.filter(user=owner, revoked_at__isnull=True).count() == 1


# --- all of an event type's webhooks ----------------------------------------------------------


def test_delete_all_webhooks_of_an_event_type(v2, owner):
    event_type = EventTypeFactory(owner=owner)
    WebhookFactory.create_batch(2, user=None, event_type=event_type)
    own = WebhookFactory(user=owner)
    other_event_type = WebhookFactory(user=None, event_type=EventTypeFactory(owner=owner))

    answer = v2.call("DELETE", f"/v2/event-types/{event_type.pk}/webhooks", version=VERSION)
    assert answer.status_code == 200
    assert answer.json() == {"status": "success", "data": "2 webhooks deleted"}
    assert set(Webhook.objects.all()) == {own, other_event_type}


def test_delete_all_needs_an_event_type_the_caller_sees_and_manages(v2, owner):
    hidden = EventTypeFactory()
    WebhookFactory(user=None, event_type=hidden)
    assert_error(v2.call("DELETE", f"/v2/event-types/{hidden.pk}/webhooks", version=VERSION), 404, "NotFoundException")
    team = TeamFactory()
    MembershipFactory(user=owner, team=team, role="MEMBER")
    team_event_type = EventTypeFactory(owner=None, team=team, schedule=None)
    WebhookFactory(user=None, event_type=team_event_type)
    # A team member sees the team's event type but manages none of its webhooks.
    answer = v2.call("DELETE", f"/v2/event-types/{team_event_type.pk}/webhooks", version=VERSION)
    assert answer.json() == {"status": "success", "data": "0 webhooks deleted"}
    assert Webhook.objects.count() == 2


def test_an_api_key_of_someone_else_changes_nothing(api_client, owner):
    event_type = EventTypeFactory(owner=owner)
    WebhookFactory(user=None, event_type=event_type)
    stranger = V2Client(api_client, UserFactory())
    assert_error(
        stranger.call("DELETE", f"/v2/event-types/{event_type.pk}/webhooks", version=VERSION), 404, "NotFoundException"
    )
    assert Webhook.objects.count() == 1
