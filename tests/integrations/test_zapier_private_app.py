"""A private Zapier app built from Cal.com's guide, replayed as Zapier calls a Cal.com deployment.

calcom/cal.com, packages/app-store/zapier/:
- README.md (the developer guide): OAuth v2 with the token URL `<baseUrl>/api/auth/oauth/token`;
  every call sends `Authorization: Bearer {{bundle.authData.access_token}}`. The authentication test
  is `GET <baseUrl>/api/integrations/zapier/listBookings`. Each trigger is a REST hook: subscribe is
  `POST …/addSubscription` with `{subscriberUrl: {{bundle.targetUrl}}, triggerEvent: BOOKING_CREATED}`
  (Zapier keeps the answer as `bundle.subscribeData`), unsubscribe is
  `DELETE …/deleteSubscription?id={{bundle.subscribeData.id}}`, performList is `GET …/listBookings`
  (`GET …/listOOOEntries` for "Out Of Office Created").
- lib/validateAccountOrApiKey.ts: `?apiKey=` where given, else the bearer token.
- api/subscriptions/me.ts: `GET …/me` answers 200 with `{username}`.
- features/webhooks/lib/sendPayload.ts `getZapierPayload`: a webhook with `appId: "zapier"` gets a
  booking trigger flattened: `title`, `description`, `customInputs`, `responses`,
  `userFieldsResponses`, `startTime`, `endTime`, `location`, `status`, `cancellationReason`, `user`
  (`username`, `name`, `email`, `timeZone`, `utcOffset`, `locale`), `eventType` (`title`,
  `description`, `requiresConfirmation`, `price`, `currency`, `length`), `attendees` (`name`,
  `email`, `timeZone`, `utcOffset`) and `createdAt`; Zapier maps those keys into the Zap.
"""

import json
from datetime import datetime, timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, UserFactory
from holds.models import OutOfOfficeEntry
from holds.services import out_of_office_create
from scheduling.payloads import booking_payload, utc_offset
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory
from webhooks.delivery import build_request
from webhooks.models import Webhook, WebhookDelivery

pytestmark = pytest.mark.django_db

BASE = "/api/integrations/zapier"
FLAT_KEYS = {
    "title",
    "description",
    "customInputs",
    "responses",
    "userFieldsResponses",
    "startTime",
    "endTime",
    "location",
    "status",
    "cancellationReason",
    "user",
    "eventType",
    "attendees",
}


class ZapierApp:
    """What the private app sends: the OAuth access token as a bearer token, or `?apiKey=`."""

    def __init__(self, client, *, token: str | None = None, api_key: str | None = None):
        self.client, self.token, self.api_key = client, token, api_key

    def call(self, method: str, name: str, body=None, **query):
        if self.api_key:
            query["apiKey"] = self.api_key
        url = f"{BASE}/{name}" + (f"?{urlencode(query)}" if query else "")
        headers = {"HTTP_AUTHORIZATION": f"Bearer {self.token}"} if self.token else {}
        if body is None:
            return self.client.generic(method, url, **headers)
        return self.client.generic(method, url, json.dumps(body), content_type="application/json", **headers)

    def subscribe(self, target_url: str, trigger: str) -> dict:
        response = self.call("POST", "addSubscription", {"subscriberUrl": target_url, "triggerEvent": trigger})
        assert response.status_code == 200, response.content
        return response.json()  # bundle.subscribeData


@pytest.fixture
def user():
    return UserFactory(username="grace", name="Grace Hopper", time_zone="America/New_York")


@pytest.fixture
def zapier(api_client, user):
    token = AccessTokenFactory(user=user, scope="READ_BOOKING READ_PROFILE")
    return ZapierApp(api_client, token=token.raw_token)


def test_authentication_test_performs_list_and_me(zapier, user):
    BookingFactory(organizer=user)
    listed = zapier.call("GET", "listBookings")
    assert listed.status_code == 201
    [booking] = listed.json()
    assert set(booking) == FLAT_KEYS
    me = zapier.call("GET", "me")
    assert me.status_code == 200 and me.json() == {"username": "grace"}


def test_perform_list_is_empty_for_a_user_without_bookings(zapier):
    listed = zapier.call("GET", "listBookings")
    assert listed.status_code == 201 and listed.json() == []
    assert zapier.call("GET", "listOOOEntries").json() == []


def test_rest_hook_subscribe_receive_flattened_and_unsubscribe(api_client, zapier, user, receiver):
    subscribe_data = zapier.subscribe(receiver.url("/hooks/standard/123/abc"), "BOOKING_CREATED")
    webhook = Webhook.objects.get()
    assert subscribe_data["id"] == str(webhook.pk)
    assert (webhook.app_id, webhook.user, webhook.event_triggers) == ("zapier", user, ["BOOKING_CREATED"])

    # A booking made through the API: its BOOKING_CREATED delivery is the flat object.
    event_type = EventTypeFactory(
        owner=user, schedule=ScheduleFactory(user=user, time_zone="UTC"), title="Intro", length=30
    )
    query = f"apiKey={ApiKeyFactory(user=user).raw_key}"
    day = (timezone.now() + timedelta(days=7)).date()
    slots = api_client.get(
        f"/v1/slots?eventTypeId={event_type.pk}&startTime={day}&endTime={day + timedelta(days=4)}&{query}"
    ).json()["slots"]
    start = next(iter(slots.values()))[0]["time"]
    booked = api_client.post(
        f"/v1/bookings?{query}",
        json.dumps(
            {
                "eventTypeId": event_type.pk,
                "start": start,
                "responses": {"name": "Ada Lovelace", "email": "ada@example.org"},
                "timeZone": "Europe/London",
                "language": "en",
                "metadata": {},
            }
        ),
        content_type="application/json",
    )
    assert booked.status_code == 200, booked.content
    delivery = WebhookDelivery.objects.get(webhook=webhook)
    body, headers = build_request(delivery, webhook, timezone.now())
    item = json.loads(body)
    assert headers["Content-Type"] == "application/json"
    assert set(item) == FLAT_KEYS | {"createdAt"}
    assert item["title"] == booked.json()["title"] and item["status"] == "ACCEPTED"
    assert item["user"] == {
        "username": "grace",
        "name": "Grace Hopper",
        "email": user.email,
        "timeZone": "America/New_York",
        "utcOffset": item["user"]["utcOffset"],
        "locale": "en",
    }
    assert item["user"]["utcOffset"] in (-300, -240)
    assert item["eventType"]["title"] == "Intro" and item["eventType"]["length"] == 30
    london_offset = utc_offset("Europe/London", datetime.fromisoformat(start.replace("Z", "+00:00")))
    assert item["attendees"] == [
        {"name": "Ada Lovelace", "email": "ada@example.org", "timeZone": "Europe/London", "utcOffset": london_offset}
    ]
    assert item["responses"]["email"]["value"] == "ada@example.org"
    assert item["createdAt"].endswith("Z")

    # Zapier's "test trigger" through the service's test send: the PING arrives flat too.
    sent = api_client.post(f"/v1/webhooks/{webhook.pk}/test?{query}")
    assert sent.status_code == 200
    [request] = receiver.requests
    assert set(json.loads(request.body)) == FLAT_KEYS | {"createdAt"}

    deleted = zapier.call("DELETE", "deleteSubscription", id=subscribe_data["id"])
    assert deleted.status_code == 204
    assert not Webhook.objects.exists()


def test_a_cancellation_arrives_with_its_reason(zapier, user):
    zapier.subscribe("http://127.0.0.1:5680/hooks/cancelled", "BOOKING_CANCELLED")
    webhook = Webhook.objects.get()
    booking = BookingFactory(organizer=user)
    booking.cancellation_reason = "Ill"
    delivery = WebhookDelivery(
        webhook=webhook,
        trigger_event="BOOKING_CANCELLED",
        payload=booking_payload(booking, trigger="BOOKING_CANCELLED"),
        event_created_at=timezone.now(),
        message_id="msg_zapier_cancelled",
    )
    item = json.loads(build_request(delivery, webhook, timezone.now())[0])
    assert (item["status"], item["cancellationReason"]) == ("CANCELLED", "Ill")


def test_out_of_office_sample_list_shows_the_newest_entries_as_ooo_created(zapier, user):
    cover = UserFactory(name="Cover")
    for day in range(4):
        start = timezone.now() + timedelta(days=10 + day)
        out_of_office_create(
            user=user, start=start, end=start + timedelta(hours=8), reason="vacation", to_user_id=cover.pk
        )
    listed = zapier.call("GET", "listOOOEntries")
    assert listed.status_code == 200
    items = listed.json()
    assert len(items) == 3
    newest = OutOfOfficeEntry.objects.order_by("-id").first()
    entry = items[0]["payload"]["oooEntry"]
    assert items[0]["triggerEvent"] == "OOO_CREATED"
    assert (entry["id"], entry["uuid"], entry["reason"]) == (newest.pk, str(newest.uuid), {"reason": "vacation"})
    assert entry["user"]["email"] == user.email and entry["toUser"]["id"] == cover.pk


def test_out_of_office_created_trigger_receives_the_entry_in_the_envelope(api_client, zapier, user):
    """README.md's "Out Of Office Created" trigger: subscribe to OOO_CREATED; the Zap reads
    `payload.oooEntry`."""
    zapier.subscribe("http://127.0.0.1:5680/hooks/ooo", "OOO_CREATED")
    webhook = Webhook.objects.get()
    start = timezone.now() + timedelta(days=20)
    body = {"start": start.isoformat(), "end": (start + timedelta(days=2)).isoformat(), "reason": "travel"}
    key = ApiKeyFactory(user=user).raw_key
    created = api_client.post("/v2/me/ooo", body, format="json", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert created.status_code == 201, created.content

    delivery = WebhookDelivery.objects.get(webhook=webhook)
    sent = json.loads(build_request(delivery, webhook, timezone.now())[0])
    assert sent["triggerEvent"] == "OOO_CREATED"
    entry = sent["payload"]["oooEntry"]
    assert (entry["id"], entry["reason"], entry["user"]["username"]) == (
        created.json()["data"]["id"],
        {"reason": "travel"},
        "grace",
    )
    assert zapier.call("GET", "listOOOEntries").json()[0]["payload"] == sent["payload"]


def test_api_key_in_the_query_works_as_the_token_does(api_client, user):
    app = ZapierApp(api_client, api_key=ApiKeyFactory(user=user).raw_key)
    assert app.call("GET", "me").json() == {"username": "grace"}
    subscribe_data = app.subscribe("http://127.0.0.1:5680/hooks/key", "BOOKING_RESCHEDULED")
    assert app.call("DELETE", "deleteSubscription", id=subscribe_data["id"]).status_code == 204


def test_a_token_without_the_scope_is_refused_and_subscribes_nothing(api_client, user):
    app = ZapierApp(api_client, token=AccessTokenFactory(user=user, scope="READ_PROFILE").raw_token)
    response = app.call(
        "POST", "addSubscription", {"subscriberUrl": "http://127.0.0.1:5680/x", "triggerEvent": "BOOKING_CREATED"}
    )
    assert response.status_code == 403
    assert "READ_BOOKING" in response.json()["message"]
    assert not Webhook.objects.exists()
    assert app.call("GET", "me").status_code == 200


def test_a_make_subscription_cannot_be_deleted_through_zapier(api_client, user, zapier):
    key = ApiKeyFactory(user=user).raw_key
    made = api_client.post(
        f"/api/integrations/make/addSubscription?apiKey={key}",
        {"subscriberUrl": "http://127.0.0.1:5680/make", "triggerEvent": "BOOKING_CREATED"},
        format="json",
    )
    assert made.status_code == 200
    assert zapier.call("DELETE", "deleteSubscription", id=made.json()["id"]).status_code == 404
    assert Webhook.objects.filter(app_id="make").exists()
