"""Cal.com's Make app, replayed as Make calls a Cal.com deployment.

calcom/cal.com, packages/app-store/make/:
- README.md: the Make connection takes "your Cal deployment url and the app API key"; every call is
  `<deployment url>/api/integrations/make/<call>?apiKey=<key>`.
- api/subscriptions/me.ts: `GET …/me` answers 201 with `{username}` (the connection test).
- api/subscriptions/addSubscription.ts: `POST …/addSubscription` with `{subscriberUrl, triggerEvent}`
  creates a webhook of the key's user for that one trigger with `appId: "make"`, and answers 200 with
  the webhook row; Make keeps its `id`. A MEETING_ENDED subscription schedules the trigger for the
  user's future accepted bookings at once.
- api/subscriptions/listBookings.ts (over features/webhooks/lib/scheduleTrigger.ts `listBookings`):
  `GET …/listBookings` answers 201 with the three newest bookings (`title`, `startTime`, `user`,
  `eventType`, `attendees`, …), or 404 with a message when there is none.
- api/subscriptions/deleteSubscription.ts: `DELETE …/deleteSubscription?id=` deletes the user's
  subscription of this app and answers 204.
- features/webhooks/lib/cron.ts: an app subscription's MEETING_ENDED is posted as the booking record
  with `triggerEvent` in it, no envelope.
"""

import json
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.tests.factories import BookingFactory
from webhooks.delivery import build_request
from webhooks.models import Webhook, WebhookDelivery, WebhookScheduledTrigger
from webhooks.scheduled import fire_due_scheduled_triggers

pytestmark = pytest.mark.django_db

BASE = "/api/integrations/make"


class MakeConnection:
    """The Make app's connection: the deployment URL and an API key, sent as `?apiKey=`."""

    def __init__(self, client, api_key: str):
        self.client, self.api_key = client, api_key

    def call(self, method: str, name: str, body=None, **query):
        url = f"{BASE}/{name}?{urlencode({'apiKey': self.api_key, **query})}"
        if body is None:
            return self.client.generic(method, url)
        return self.client.generic(method, url, json.dumps(body), content_type="application/json")


def subscribe(connection: MakeConnection, name: str, trigger: str = "BOOKING_CREATED"):
    body = {"subscriberUrl": f"http://127.0.0.1:5679/make/{name}", "triggerEvent": trigger}
    return connection.call("POST", "addSubscription", body)


@pytest.fixture
def make(api_client):
    user = UserFactory(username="ada")
    return MakeConnection(api_client, ApiKeyFactory(user=user).raw_key), user


def test_connection_test_reads_the_username_with_status_201(make):
    connection, _ = make
    response = connection.call("GET", "me")
    assert response.status_code == 201
    assert response.json() == {"username": "ada"}


def test_subscribe_list_and_unsubscribe(make):
    connection, user = make
    hook = "http://127.0.0.1:5679/make/abc123"

    created = connection.call("POST", "addSubscription", {"subscriberUrl": hook, "triggerEvent": "BOOKING_CREATED"})

    assert created.status_code == 200, created.content
    webhook = Webhook.objects.get()
    assert created.json()["id"] == str(webhook.pk)
    assert created.json()["appId"] == "make" and webhook.app_id == "make"
    assert (webhook.user, webhook.subscriber_url, webhook.event_triggers) == (user, hook, ["BOOKING_CREATED"])

    deleted = connection.call("DELETE", "deleteSubscription", id=created.json()["id"])
    assert deleted.status_code == 204
    assert not Webhook.objects.exists()


def test_list_bookings_is_404_with_a_message_until_there_is_a_booking(make):
    connection, user = make
    empty = connection.call("GET", "listBookings")
    assert empty.status_code == 404
    assert empty.json()["message"] == (
        f"There are no bookings to retrieve, please create a booking first. Requested: `userId: {user.pk}`"
    )

    for _ in range(4):
        BookingFactory(organizer=user, attendees=[{"name": "Grace", "email": "grace@example.org"}])
    BookingFactory()  # someone else's

    listed = connection.call("GET", "listBookings")
    assert listed.status_code == 201
    bookings = listed.json()
    assert len(bookings) == 3
    newest = user.bookings.order_by("-id")[0]
    first = bookings[0]
    assert first["title"] == newest.title and first["status"] == "ACCEPTED"
    assert first["startTime"] == newest.start_time.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert first["user"]["username"] == "ada"
    assert first["eventType"]["title"] == newest.event_type.title
    assert first["attendees"][0]["email"] == "grace@example.org"
    assert first["responses"]["email"]["value"] == "grace@example.org"


def test_meeting_ended_subscription_backfills_future_bookings_and_posts_the_record(make):
    connection, user = make
    upcoming = BookingFactory(organizer=user)
    BookingFactory(organizer=user, status="CANCELLED")

    created = subscribe(connection, "ended", "MEETING_ENDED")

    assert created.status_code == 200
    [scheduled] = WebhookScheduledTrigger.objects.all()
    assert (scheduled.booking, scheduled.trigger_event, scheduled.start_after) == (
        upcoming,
        "MEETING_ENDED",
        upcoming.end_time,
    )

    after_end = upcoming.end_time + timedelta(minutes=1)
    assert fire_due_scheduled_triggers(now=after_end) == 1
    delivery = WebhookDelivery.objects.get()
    body, headers = build_request(delivery, delivery.webhook, timezone.now())
    record = json.loads(body)
    assert headers["Content-Type"] == "application/json"
    assert record["triggerEvent"] == "MEETING_ENDED"
    assert (record["id"], record["uid"]) == (upcoming.pk, upcoming.uid)
    assert "payload" not in record


def test_other_deliveries_of_a_make_subscription_keep_the_envelope(make):
    connection, user = make
    subscribe(connection, "c")
    webhook = Webhook.objects.get()
    delivery = WebhookDelivery(
        webhook=webhook,
        trigger_event="BOOKING_CREATED",
        payload={"title": "x"},
        event_created_at=timezone.now(),
        message_id="msg_make_envelope",
    )
    body, _ = build_request(delivery, webhook, timezone.now())
    envelope = json.loads(body)
    assert (envelope["triggerEvent"], envelope["payload"]) == ("BOOKING_CREATED", {"title": "x"})


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"subscriberUrl": "http://127.0.0.1:5679/make/a", "triggerEvent": "BOOKING_EXPLODED"}, "triggerEvent"),
        ({"triggerEvent": "BOOKING_CREATED"}, "subscriberUrl"),
        ({"subscriberUrl": "http://127.0.0.1:1/x y", "triggerEvent": "BOOKING_CREATED"}, "subscriberUrl"),
        ({"subscriberUrl": "http://127.0.0.1:5679/make/a", "triggerEvent": "BOOKING_CREATED", "x": 1}, "x"),
    ],
)
def test_a_bad_subscribe_body_is_a_400_naming_the_field_and_creates_nothing(make, body, field):
    connection, _ = make
    response = connection.call("POST", "addSubscription", body)
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not Webhook.objects.exists()


def test_without_a_valid_key_every_call_is_a_401_and_changes_nothing(api_client, make):
    connection, _ = make
    subscribe(connection, "k")
    webhook = Webhook.objects.get()
    for api_key in ("", "sk_live_not-a-key"):
        stranger = MakeConnection(api_client, api_key)
        assert stranger.call("GET", "me").status_code == 401
        assert stranger.call("GET", "listBookings").status_code == 401
        assert stranger.call("DELETE", "deleteSubscription", id=str(webhook.pk)).status_code == 401
        body = {"subscriberUrl": "http://127.0.0.1:5679/make/new", "triggerEvent": "BOOKING_CREATED"}
        assert stranger.call("POST", "addSubscription", body).status_code == 401
    assert list(Webhook.objects.all()) == [webhook]


def test_unsubscribe_reaches_only_the_callers_make_subscriptions(api_client, make):
    connection, _ = make
    other = MakeConnection(api_client, ApiKeyFactory().raw_key)
    theirs = subscribe(other, "t")
    own_webhook = connection.client.post(
        f"/v1/webhooks?apiKey={connection.api_key}",
        {"subscriberUrl": "http://127.0.0.1:5679/own", "eventTriggers": ["BOOKING_CREATED"]},
        format="json",
    )
    assert own_webhook.status_code == 200

    for subscription_id in (theirs.json()["id"], own_webhook.json()["webhook"]["id"], "not-a-uuid"):
        response = connection.call("DELETE", "deleteSubscription", id=subscription_id)
        assert response.status_code == 404
    missing = connection.call("DELETE", "deleteSubscription")
    assert missing.status_code == 400 and "id" in missing.json()["errors"]
    assert Webhook.objects.count() == 2
